import Testing

@testable import MITMHTTP2

@Suite struct HTTP2StreamLifecycleTests {
    @Test func aResetReachesThePeerWithItsCode() throws {
        let pair = try SessionPair()
        let id = try pair.client.submitRequest(Fields.post(), endStream: false)
        try pair.pump()
        pair.client.reset(streamID: id, code: .cancel)
        try pair.pump()
        #expect(pair.clientEvents.contains(.resetSent(streamID: id, .cancel)))
        #expect(pair.serverEvents.contains(.resetReceived(streamID: id, .cancel)))
        #expect(pair.serverEvents.contains(.streamClosed(streamID: id, .cancel)))
        #expect(!pair.server.isOpen(streamID: id))
    }

    @Test func aResetStreamLeavesItsSiblingsAlone() throws {
        let pair = try SessionPair()
        let doomed = try pair.client.submitRequest(Fields.get("/doomed"), endStream: true)
        let sibling = try pair.client.submitRequest(Fields.get("/sibling"), endStream: true)
        try pair.pump()
        try pair.server.submitResponse(streamID: doomed, Fields.status(200), endStream: false)
        try pair.server.submitResponse(streamID: sibling, Fields.status(200), endStream: false)
        pair.server.send(Array("partial".utf8), on: doomed)
        try pair.pump()
        pair.server.reset(streamID: doomed, code: .internalError)
        pair.server.send(Array("complete".utf8), on: sibling)
        pair.server.finish(streamID: sibling)
        try pair.pump()
        #expect(pair.clientEvents.contains(.resetReceived(streamID: doomed, .internalError)))
        #expect(pair.clientEvents.contains(.streamClosed(streamID: sibling, .noError)))
        #expect(pair.clientBody(sibling) == Array("complete".utf8))
    }

    @Test func goAwayNamesTheLastProcessedStreamAndStopsNewOnes() throws {
        let pair = try SessionPair()
        let first = try pair.client.submitRequest(Fields.get(), endStream: true)
        try pair.pump()
        pair.server.goAway(code: .noError, debug: "maintenance")
        try pair.pump()
        #expect(pair.clientEvents.contains(.goAwayReceived(lastStreamID: first, .noError, debug: "maintenance")))
        #expect(pair.serverEvents.contains(.goAwaySent(lastStreamID: first, .noError, debug: "maintenance")))
        let late = try pair.client.submitRequest(Fields.get("/late"), endStream: true)
        // The stream in flight still completes; then both sides are done.
        try pair.server.submitResponse(streamID: first, Fields.status(200), endStream: true)
        try pair.pump()
        #expect(pair.clientEvents.contains(.streamClosed(streamID: first, .noError)))
        #expect(pair.clientEvents.contains(.streamClosed(streamID: late, .refusedStream)))
        #expect(SessionPair.blocks(pair.serverEvents, late).isEmpty)
        #expect(pair.server.isFinished)
        #expect(pair.client.isFinished)
    }

    @Test func gracefulShutdownLetsStreamsInFlightFinish() throws {
        let pair = try SessionPair()
        let inFlight = try pair.client.submitRequest(Fields.post(), endStream: false)
        try pair.pump()
        pair.server.goAway()
        try pair.pump()
        pair.client.send(Array("late body".utf8), on: inFlight)
        pair.client.finish(streamID: inFlight)
        try pair.pump()
        #expect(pair.serverBody(inFlight) == Array("late body".utf8))
        try pair.server.submitResponse(streamID: inFlight, Fields.status(200), endStream: true)
        try pair.pump()
        #expect(pair.server.isFinished)
        #expect(pair.client.isFinished)
    }

    @Test func requestsBeyondThePeersConcurrencyLimitWait() throws {
        var serverSettings = HTTP2Settings()
        serverSettings.maxConcurrentStreams = 2
        let pair = try SessionPair(server: serverSettings)
        try pair.pump()
        #expect(pair.client.peerMaxConcurrentStreams == 2)
        let ids = try (0..<5).map { index in try pair.client.submitRequest(Fields.get("/\(index)"), endStream: true) }
        var answered: [Int32] = []
        for _ in 0..<5 {
            try pair.pump()
            let open = pair.serverEvents.compactMap { event -> Int32? in
                if case .headers(let id, let block) = event, block.kind == .request, !answered.contains(id) {
                    return id
                }
                return nil
            }
            #expect(open.count <= 2)
            for id in open {
                try pair.server.submitResponse(streamID: id, Fields.status(200), endStream: true)
                answered.append(id)
            }
        }
        try pair.pump()
        #expect(answered.sorted() == ids)
    }

    @Test func streamsWaitForThePeersSettingsWhenToldTo() throws {
        var clientSettings = HTTP2Settings()
        clientSettings.streamsBeforePeerSettings = 0
        var serverSettings = HTTP2Settings()
        serverSettings.maxConcurrentStreams = 3
        let pair = try SessionPair(client: clientSettings, server: serverSettings)
        let ids = try (0..<5).map { index in try pair.client.submitRequest(Fields.get("/\(index)"), endStream: true) }
        let early = RawFrame.parse(try pair.client.produceOutput())
        #expect(!early.contains { $0.type == 0x1 })
        try pair.server.receive(RawFrame.clientPreface + RawFrame.settings())
        try pair.client.receive(try pair.server.produceOutput())
        try pair.server.receive(try pair.client.produceOutput())
        let opened = pair.server.takeEvents().filter { if case .headers = $0 { return true } else { return false } }
        #expect(opened.count == 3)
        #expect(ids.count == 5)
    }
}
