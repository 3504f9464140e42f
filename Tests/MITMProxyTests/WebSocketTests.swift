import Foundation
import Testing

/// WebSocket messages after a `101` on HTTP/1.1: read from a copy of the relayed bytes and recorded in the
/// console, the events and the HAR, while the endpoints get exactly what the other side sent.
@Suite(.tags(.live), .skippedInFastTier) struct WebSocketTests {
    /// What ws_client.py's `session` scenario sends, and the echo origin returns, in order: (direction, type,
    /// data as recorded with `limit` bytes kept: text, or base64 for every other opcode).
    static func sessionMessages(limit: Int) -> [(String, String, String)] {
        let binary = Data((0..<256).map { UInt8($0) }.prefix(limit)).base64EncodedString()
        let ping = Data("are you there".utf8).base64EncodedString()
        var list: [(String, String, String)] = []
        for (type, data) in [("text", "hello ✓"), ("binary", binary), ("text", "fragmented message")] {
            list += [("send", type, data), ("receive", type, data)]
        }
        list += [("send", "ping", ping), ("receive", "pong", ping)]
        return list
    }

    static let large = String(repeating: "WebSocket through mitm-proxy, the same words again and again. ", count: 2000)

    private func startOrigin(_ extra: [String] = []) async throws -> OriginServer {
        try await OriginServer.start(
            .tls(.origin), script: RepositoryLayout.webSocketOriginScript, extraArguments: extra)
    }

    /// The events and the HAR hold the session's messages once each, in order, with their direction and content.
    static func expectSession(
        _ run: WebSocketRun, connection: Int, client: JSON, compressed: Bool, limit: Int,
        handshakeStatus: Int = 101
    ) throws {
        let events = run.messages(connection: connection)
        let digest = try #require(client["digestReply"].string)
        let largeKept = String(Self.large.prefix(limit))
        var expected = Self.sessionMessages(limit: limit)
        expected += [
            ("send", "text", largeKept), ("receive", "text", largeKept), ("send", "text", "digest"),
            ("receive", "text", digest),
        ]
        let closeData = Data([0x03, 0xE8] + Array("client done".utf8)).base64EncodedString()
        expected += [("send", "close", closeData), ("receive", "close", closeData)]
        #expect(events.map { $0["direction"].string ?? "" } == expected.map(\.0))
        #expect(events.map { $0["messageType"].string ?? "" } == expected.map(\.1))
        #expect(events.map { $0["data"].string ?? "" } == expected.map(\.2))
        #expect(events.allSatisfy { $0["malformed"].isNull })
        #expect(
            events.map { $0["compressed"].bool ?? false }
                == expected.map { compressed && ["text", "binary"].contains($0.1) })
        #expect(events.filter { $0["data"].string == "fragmented message" }.map { $0["frames"].int } == [3, 3])
        let largeEvents = events.filter { $0["size"].int == Self.large.utf8.count }
        #expect(largeEvents.count == 2)
        #expect(largeEvents.allSatisfy { $0["truncated"].bool == true })
        if compressed { #expect(largeEvents.allSatisfy { ($0["wireBytes"].int ?? .max) < 2000 }, "sent compressed") }
        #expect(events.last?["closeCode"].int == 1000 && events.last?["closeReason"].string == "client done")
        let close = run.events.filter { $0["type"].string == "websocket-close" && $0["connection"].int == connection }
        #expect(close.count == 1)
        #expect(close.first?["closedBy"].string == "send")
        #expect(close.first?["messagesSent"].int == 7 && close.first?["messagesReceived"].int == 7)

        let entry = try #require(run.harEntry(connection: connection))
        #expect(entry["response"]["status"].int == handshakeStatus)
        #expect(entry["_resourceType"].string == "websocket")
        let har = entry["_webSocketMessages"].array
        #expect(har.map { $0["type"].string ?? "" } == expected.map(\.0))
        #expect(har.map { $0["data"].string ?? "" } == expected.map(\.2))
        let opcodes = ["text": 1, "binary": 2, "close": 8, "ping": 9, "pong": 10]
        #expect(har.map { $0["opcode"].int ?? 0 } == expected.map { opcodes[$0.1] ?? 0 })
        let times = har.compactMap { ($0["time"].value as? NSNumber)?.doubleValue }
        #expect(times.count == har.count && times == times.sorted())
        #expect(times.allSatisfy { abs($0 - Date().timeIntervalSince1970) < 600 }, "epoch seconds")
        let truncated = (limit < 256 ? [256, 256] : []) + [Self.large.utf8.count, Self.large.utf8.count]
        #expect(har.filter { $0["_truncated"].bool == true }.map { $0["_size"].int } == truncated)
    }

    /// What ws_client.py's session scenario received: every echo, byte for byte as the origin sent it.
    static func expectClientSaw(_ client: JSON, extensions: String) {
        #expect(
            client["digestMatches"].bool == true, "the client received exactly the bytes the origin sent: \(client)")
        #expect(client["extensions"].string == extensions)
        let received = client["received"].array
        #expect(received.map { $0["type"].string ?? "" } == ["text", "binary", "text", "pong", "text", "close"])
        #expect(received.first?["data"].string == "hello ✓")
        #expect(received[2]["frames"].int == 3, "the fragments arrived as fragments")
        #expect(received[4]["matches"].bool == true)
        #expect(received.last?["code"].int == 1000)
    }

    @Test func aCompressedSessionIsRecordedMessageByMessage() async throws {
        let origin = try await startOrigin()
        let run = try await WebSocketRun.run(
            origin: origin, scenarios: [["session"]], proxyArguments: ["--body-limit", "1000"])
        await origin.stop()
        let client = run.clients[0]
        Self.expectClientSaw(client, extensions: "permessage-deflate")
        let connection = try #require(run.upgradedConnections.first)
        try Self.expectSession(run, connection: connection, client: client, compressed: true, limit: 1000)
        #expect(
            run.console.contains("#\(connection) WS origin.test: send text 9 B (11 B compressed) \"hello ✓\""),
            "\(run.console)")
        #expect(run.console.contains("WS origin.test: receive text 124.0 kB"))
        #expect(run.console.contains("WS https://origin.test:\(origin.port)/chat ended: 7 sent, 7 received"))
    }

    @Test func anUncompressedSessionIsRecordedMessageByMessage() async throws {
        let origin = try await startOrigin(["--no-compression"])
        let run = try await WebSocketRun.run(
            origin: origin, scenarios: [["--no-compression", "session"]],
            proxyArguments: ["--body-limit", "100"])
        await origin.stop()
        Self.expectClientSaw(run.clients[0], extensions: "")
        let connection = try #require(run.upgradedConnections.first)
        try Self.expectSession(run, connection: connection, client: run.clients[0], compressed: false, limit: 100)
    }

    @Test func aMalformedFrameIsRecordedAndRelayedAsItCame() async throws {
        let origin = try await startOrigin()
        let run = try await WebSocketRun.run(origin: origin, scenarios: [["unmasked"], ["server-close"]])
        await origin.stop()
        // The origin saw the unmasked frame as the client sent it, and failed the connection as RFC 6455 says.
        #expect(run.clients[0]["answer"]["code"].int == 1002, "\(run.clients[0])")
        let connections = run.upgradedConnections
        try #require(connections.count == 2)
        let unmasked = run.messages(connection: connections[0])
        #expect(unmasked.first?["data"].string == "hello")
        #expect(
            unmasked.first?["malformed"].string == "an unmasked frame from the client (clients must mask every frame)")
        #expect(unmasked.dropFirst().first?["closeCode"].int == 1002)
        #expect(
            run.console.contains("WS origin.test: send text 5 B \"hello\" MALFORMED: an unmasked frame from the client")
        )
        let malformed = run.harEntry(connection: connections[0])?["_webSocketMessages"][0]["_malformed"].string
        #expect(malformed?.hasPrefix("an unmasked frame") == true)

        #expect(run.clients[1]["answer"]["code"].int == 4001)
        let close = run.events.first {
            $0["type"].string == "websocket-close" && $0["connection"].int == connections[1]
        }
        #expect(close?["closedBy"].string == "receive")
        #expect(close?["closeCode"].int == 4001 && close?["closeReason"].string == "origin leaves")
    }
}
