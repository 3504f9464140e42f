import Foundation
import Testing

/// WebSockets over HTTP/2 (RFC 8441 extended CONNECT): offered to the client only when the upstream offers
/// them, relayed stream to stream, and recorded like the HTTP/1.1 ones.
@Suite(.tags(.live), .skippedInFastTier) struct WebSocketHTTP2Tests {
    @Test func aCompressedSessionOverAnHTTP2StreamIsRecordedMessageByMessage() async throws {
        let origin = try await OriginServer.start(
            .tls(.origin), script: RepositoryLayout.h2OriginScript,
            extraArguments: ["--extended-connect"])
        let run = try await WebSocketRun.run(
            origin: origin, scenarios: [["--h2", "session"]], proxyArguments: ["--body-limit", "1000"])
        await origin.stop()
        let client = run.clients[0]
        WebSocketTests.expectClientSaw(client, extensions: "permessage-deflate")
        let connection = try #require(run.upgradedConnections.first)
        try WebSocketTests.expectSession(
            run, connection: connection, client: client, compressed: true, limit: 1000, handshakeStatus: 200)
        let messages = run.messages(connection: connection)
        #expect(messages.allSatisfy { $0["stream"].int == 1 }, "the WebSocket's stream")
        let handshake = run.events.first { $0["type"].string == "response" && $0["connection"].int == connection }
        #expect(handshake?["method"].string == "CONNECT")
        #expect(handshake?["url"].string == "https://origin.test:\(origin.port)/chat")
        #expect(handshake?["httpVersion"].string == "HTTP/2.0")
        let entry = try #require(run.harEntry(connection: connection))
        #expect(entry["request"]["method"].string == "CONNECT")
        #expect(entry["request"]["httpVersion"].string == "HTTP/2.0")
        let close = run.events.first { $0["type"].string == "websocket-close" }
        #expect(close?["reason"].string == "the stream ended")
        #expect(close?["stream"].int == 1)
        #expect(
            run.console.contains("#\(connection) CONNECT https://origin.test:\(origin.port)/chat (h2) -> 200"),
            "\(run.console)")
    }

    @Test func extendedConnectIsOfferedOnlyWhenTheUpstreamOffersIt() async throws {
        let harness = try await HTTP2Harness.start(.h2(extendedConnect: false))
        let result = try await Subprocess.run(
            "python3",
            [
                RepositoryLayout.webSocketClientScript, "--h2", "--proxy-port", String(harness.harness.port), "--host",
                "origin.test",
                "--port", String(harness.origin.port), "--cafile", harness.harness.caCertificate, "session",
            ], timeout: .seconds(30))
        #expect(JSON(parsing: result.stdoutText)["extendedConnect"].bool == false, "\(result)")
        // The same client against an origin that offers it gets it: the offer follows the upstream.
        let offering = try await HTTP2Harness.start(.h2(extendedConnect: true))
        let accepted = try await Subprocess.run(
            "python3",
            [
                RepositoryLayout.webSocketClientScript, "--h2", "--proxy-port", String(offering.harness.port), "--host",
                "origin.test",
                "--port", String(offering.origin.port), "--cafile", offering.harness.caCertificate, "--no-compression",
                "session",
            ], timeout: .seconds(30))
        #expect(JSON(parsing: accepted.stdoutText)["digestMatches"].bool == true, "\(accepted)")
        await harness.stop()
        await offering.stop()
    }

    @Test func aRefusedWebSocketIsAnOrdinaryExchange() async throws {
        let harness = try await HTTP2Harness.start(.h2(extendedConnect: true))
        let result = try await Subprocess.run(
            "python3",
            [
                RepositoryLayout.webSocketClientScript, "--h2", "--path", "/elsewhere", "--proxy-port",
                String(harness.harness.port),
                "--host", "origin.test", "--port", String(harness.origin.port), "--cafile",
                harness.harness.caCertificate, "session",
            ], timeout: .seconds(30))
        #expect(JSON(parsing: result.stdoutText)["status"].int == 403, "\(result)")
        #expect(await harness.connectionsClosed())
        let record = try #require(harness.events.exchange(endingWith: "/elsewhere"))
        #expect(record.request.method == "CONNECT")
        #expect(record.response?.status == 403)
        #expect(record.webSocket == nil)
        #expect(!harness.events.events.contains { if case .webSocketClose = $0 { true } else { false } })
        await harness.stop()
    }
}
