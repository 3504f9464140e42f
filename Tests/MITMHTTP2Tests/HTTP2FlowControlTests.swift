import Testing

@testable import MITMHTTP2

@Suite struct HTTP2FlowControlTests {
    private func smallWindows() -> HTTP2Settings {
        var settings = HTTP2Settings()
        settings.streamWindow = 16_384
        return settings
    }

    @Test func aStreamReceivesNoMoreThanItsWindowUntilConsumed() throws {
        let pair = try SessionPair(server: smallWindows())
        try pair.pump()
        let id = try pair.client.submitRequest(Fields.post(), endStream: false)
        pair.client.send([UInt8](repeating: 7, count: 100_000), on: id)
        pair.client.finish(streamID: id)
        try pair.pump()
        #expect(pair.serverBody(id).count == 16_384)
        #expect(pair.client.queuedBytes(on: id) == 100_000 - 16_384)

        var consumed = 0
        var received = pair.serverBody(id).count
        for _ in 0..<50 where received < 100_000 {
            #expect(received - consumed <= 16_384)
            pair.server.consume(streamID: id, count: received - consumed)
            consumed = received
            try pair.pump()
            received = pair.serverBody(id).count
        }
        #expect(received == 100_000)
        #expect(pair.serverEvents.contains(.endStream(streamID: id)))
    }

    @Test func consumingPartOfTheWindowLetsThatMuchMoreIn() throws {
        let pair = try SessionPair(server: smallWindows())
        try pair.pump()
        let id = try pair.client.submitRequest(Fields.post(), endStream: false)
        pair.client.send([UInt8](repeating: 7, count: 100_000), on: id)
        try pair.pump()
        #expect(pair.serverBody(id).count == 16_384)
        // nghttp2 sends WINDOW_UPDATE once half the window is consumed.
        pair.server.consume(streamID: id, count: 10_000)
        try pair.pump()
        #expect(pair.serverBody(id).count == 26_384)
    }

    @Test func aStalledStreamDoesNotBlockItsSiblings() throws {
        var settings = smallWindows()
        settings.connectionWindow = 65_535
        let pair = try SessionPair(server: settings)
        try pair.pump()
        let stalled = try pair.client.submitRequest(Fields.post("/stalled"), endStream: false)
        let flowing = try pair.client.submitRequest(Fields.post("/flowing"), endStream: false)
        pair.client.send([UInt8](repeating: 1, count: 50_000), on: stalled)
        pair.client.send([UInt8](repeating: 2, count: 300_000), on: flowing)
        pair.client.finish(streamID: flowing)
        for _ in 0..<100 where pair.serverBody(flowing).count < 300_000 {
            try pair.pump()
            pair.server.consume(streamID: flowing, count: 16_384)
        }
        #expect(pair.serverBody(flowing).count == 300_000)
        #expect(pair.serverBody(stalled).count == 16_384)
    }

    @Test func outboundBodyWaitsForThePeersWindow() throws {
        var clientSettings = HTTP2Settings()
        clientSettings.streamWindow = 20_000
        let pair = try SessionPair(client: clientSettings)
        let id = try pair.client.submitRequest(Fields.get("/big"), endStream: true)
        try pair.pump()
        try pair.server.submitResponse(streamID: id, Fields.status(200), endStream: false)
        pair.server.send([UInt8](repeating: 3, count: 1_000_000), on: id)
        try pair.pump()
        #expect(pair.clientBody(id).count == 20_000)
        #expect(pair.server.queuedBytes(on: id) == 980_000)
        let sent = pair.serverEvents.reduce(0) { total, event in
            if case .dataSent(let streamID, let count) = event, streamID == id { return total + count }
            return total
        }
        #expect(sent == 20_000)
    }
}

@Suite struct HTTP2ConnectionBudgetTests {
    /// Many streams whose bytes nobody takes: the connection window stops reopening once the owner holds a
    /// connection window's worth, so what the proxy holds is bounded per connection, not only per stream.
    @Test func unconsumedBodiesAcrossStreamsAreBoundedPerConnection() throws {
        var settings = HTTP2Settings()
        settings.streamWindow = 65_536
        settings.connectionWindow = 131_072
        let pair = try SessionPair(server: settings)
        try pair.pump()
        let ids = try (0..<20).map { index in try pair.client.submitRequest(Fields.post("/\(index)"), endStream: false)
        }
        for id in ids { pair.client.send([UInt8](repeating: 9, count: 65_536), on: id) }
        for _ in 0..<20 { try pair.pump() }
        let held = ids.map { pair.serverBody($0).count }.reduce(0, +)
        #expect(held <= 2 * 131_072, "held \(held) bytes across 20 streams")
        #expect(held >= 131_072)

        // Consuming releases the connection window again, and every byte arrives in the end.
        var consumed = [Int32: Int]()
        for _ in 0..<200 {
            for id in ids {
                let received = pair.serverBody(id).count
                pair.server.consume(streamID: id, count: received - consumed[id, default: 0])
                consumed[id] = received
            }
            try pair.pump()
        }
        #expect(ids.allSatisfy { pair.serverBody($0).count == 65_536 })
    }
}
