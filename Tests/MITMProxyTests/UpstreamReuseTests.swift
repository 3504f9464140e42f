import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// Idle upstream connections are reused by the next client of the same origin.
@Suite(.tags(.live), .skippedInFastTier) struct UpstreamReuseTests {
    private func fetch(_ harness: ProxyHarness, _ url: String) async throws -> SubprocessResult {
        try await Subprocess.run(
            "/usr/bin/curl",
            [
                "-sS", "--max-time", "10", "--proxy", harness.url,
                "--cacert", harness.caCertificate, url,
            ], timeout: .seconds(20))
    }

    @Test func aSecondClientReusesTheUpstreamConnectionTheFirstLeftIdle() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.loopCount = 1
            // Pooled for 120 s (the pool keeps a connection at most the idle timeout): outlives a slow step of a loaded run.
            $0.upstreamPoolIdle = .seconds(120)
            $0.idleTimeout = .seconds(120)
        }
        let first = try await fetch(harness, "https://localhost:\(origin.port)/hello")
        #expect(first.stdoutText == "hello from origin", "\(first)")
        #expect(await harness.waitUntilIdle())
        let second = try await fetch(harness, "https://localhost:\(origin.port)/bytes/10")
        #expect(second.succeeded, "\(second)")
        let records = harness.recorder.exchanges
        try #require(records.count == 2)
        #expect(records[0].timings.connect >= 0, "the first exchange opened the upstream connection")
        #expect(
            records[1].timings.connect == -1 && records[1].timings.ssl == -1,
            "the second reused it: no connect, no handshake")
        #expect(records[1].serverAddress == "127.0.0.1")
        #expect(harness.server.connectionVerdicts.map(\.verdict.kind) == [.intercepted, .intercepted])
        harness.stop()
        await origin.stop()
    }

    /// Persistence is per hop: `Connection: close` (and HTTP/1.0 without keep-alive) ends the client's connection, not
    /// the upstream's, as Go's `net/http` without keep-alives and `requests` without a session send on every request.
    @Test(arguments: [["--http1.1", "-H", "Connection: close"], ["--http1.0"]])
    func aClientThatClosesAfterItsRequestLeavesTheUpstreamForTheNext(_ persistence: [String]) async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.loopCount = 1
            $0.upstreamPoolIdle = .seconds(120)
            $0.idleTimeout = .seconds(120)
        }
        var answers: [SubprocessResult] = []
        for _ in 0..<3 {
            answers.append(
                try await Subprocess.run(
                    "/usr/bin/curl",
                    [
                        "-sS", "-i", "--max-time", "10", "--proxy", harness.url,
                        "--cacert", harness.caCertificate,
                    ] + persistence
                        + [origin.url("/headers", hostname: "localhost")], timeout: .seconds(20)))
            #expect(await harness.waitUntilIdle())
        }
        for answer in answers {
            #expect(answer.succeeded && answer.stdoutText.contains(" 200 "), "\(answer)")
            #expect(
                answer.stdoutText.lowercased().contains("connection: close"),
                "the client is told its connection ends: \(answer.stdoutText)")
            #expect(
                !answer.stdoutText.lowercased().contains("[\"connection\", \"close\"]"),
                "the origin was not asked to close: \(answer.stdoutText)")
        }
        let records = harness.recorder.exchanges
        try #require(records.count == 3)
        #expect(records[0].timings.connect >= 0, "the first exchange opened the upstream connection")
        #expect(
            records.dropFirst().allSatisfy { $0.timings.connect == -1 && $0.timings.ssl == -1 },
            "the next clients reused it: \(records.map(\.timings))")
        #expect(records.allSatisfy { !$0.request.keepAlive }, "the record keeps what the client sent")
        harness.stop()
        await origin.stop()
    }

    @Test func aClientAskingForAnotherNameGetsItsOwnUpstreamConnection() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.loopCount = 1
            $0.resolveOverrides = ["origin.test": "127.0.0.1"]
        }
        _ = try await fetch(harness, "https://localhost:\(origin.port)/hello")
        #expect(await harness.waitUntilIdle())
        // Same CONNECT host and port, different SNI: the pooled connection's name does not match.
        let python = """
            import ssl, sys, proxyclient
            s = proxyclient.open_tunnel(\(harness.port), "localhost", \(origin.port))
            t = ssl.create_default_context(cafile=sys.argv[1]).wrap_socket(s, server_hostname="origin.test")
            t.sendall(b"GET /hello HTTP/1.1\\r\\nHost: origin.test\\r\\nConnection: close\\r\\n\\r\\n")
            print(t.recv(4096).split(b"\\r\\n")[0].decode())
            """
        let result = try await PythonClient.run(python, [harness.caCertificate], timeout: .seconds(20))
        #expect(result.stdoutText.hasPrefix("HTTP/1.1 200"), "\(result)")
        let records = harness.recorder.exchanges
        try #require(records.count == 2)
        #expect(records[1].timings.connect >= 0, "a new upstream connection was made for the other name")
        harness.stop()
        await origin.stop()
    }

    @Test func anIdleUpstreamIsClosedWhenThePoolsIdleTimeHasPassed() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.loopCount = 1
            $0.upstreamPoolIdle = .milliseconds(1500)
        }
        let first = try await fetch(harness, "https://localhost:\(origin.port)/hello")
        #expect(first.stdoutText == "hello from origin", "\(first)")
        #expect(
            await Poll.until(timeout: .seconds(10)) { harness.server.expiredUpstreamCount == 1 },
            "the parked upstream was closed 1.5 s later")
        let second = try await fetch(harness, "https://localhost:\(origin.port)/hello")
        #expect(second.stdoutText == "hello from origin", "\(second)")
        let records = harness.recorder.exchanges
        try #require(records.count == 2)
        #expect(records[1].timings.connect >= 0, "the second client got a new upstream connection")
        harness.stop()
        await origin.stop()
    }
}
