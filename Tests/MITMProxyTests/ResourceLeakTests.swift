import Foundation
@_spi(Testing) import MITMProxy
import Testing

/// Hundreds of aborted connections (closed at once, half a request, CONNECT then close, half a ClientHello,
/// garbage, a reset after the handshake, a reset in the middle of a response) leave nothing behind: the
/// proxy's open-connection count returns to zero and the real binary's descriptor count to its start value.
@Suite(.tags(.live), .skippedInFastTier) struct ResourceLeakTests {
    private static let kinds = [
        "connect_and_close", "half_request", "connect_then_close", "half_client_hello",
        "garbage_in_tunnel", "handshake_then_reset", "reset_mid_response",
    ]

    private func abort(proxyPort: Int, originPort: UInt16, caFile: String, rounds: Int, log: () -> String) async throws
    {
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = RepositoryLayout.fixtures
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        let result = try await Subprocess.run(
            "python3",
            [
                RepositoryLayout.fixtures + "/abort_connections.py", String(proxyPort), String(originPort), caFile,
                String(rounds),
            ], environment: environment, timeout: .seconds(120))
        #expect(result.stdoutText == Self.kinds.map { "\($0) \(rounds)\n" }.joined(), "\(result); proxy: \(log())")
    }

    @Test func theBinarysDescriptorCountReturnsToItsStartAfterHundredsOfAbortedConnections() async throws {
        let proxy = try await ProxyProcess.start(["-q", "--idle-timeout", "3"])
        let origin = try await OriginServer.start()
        let fresh = try proxy.openDescriptorCount()
        // Warm up: the first interception may create what lives as long as the process (e.g. DNS threads).
        let caFile = proxy.caDirectory + "/ca.pem"
        let warmUp = try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", caFile,
                origin.url("/hello", hostname: "localhost"),
            ])
        #expect(warmUp.stdoutText == "hello from origin", "\(warmUp)")
        // And one round of the aborts: a connection closed after its handshake arms the first Dispatch timer, for which
        // libdispatch opens a timerfd that lives as long as the process.
        try await abort(proxyPort: proxy.port, originPort: origin.port, caFile: caFile, rounds: 1) {
            String(proxy.outputText.suffix(3000))
        }
        // The baseline: back to the fresh count once the warm-up's sockets are closed (an idle upstream
        // connection stays pooled for the idle timeout, 3 s here), or whatever it is after 10 s.
        var baseline = -1
        _ = await Poll.until(timeout: .seconds(10)) {
            baseline = (try? proxy.openDescriptorCount()) ?? -1
            return baseline == fresh
        }
        try await abort(proxyPort: proxy.port, originPort: origin.port, caFile: caFile, rounds: 60) {
            String(proxy.outputText.suffix(3000))
        }
        var current = -1
        let settled = await Poll.until(timeout: .seconds(30)) {
            current = (try? proxy.openDescriptorCount()) ?? -1
            return current == baseline
        }
        #expect(settled, "descriptors: \(baseline) before, \(current) after; output: \(proxy.outputText.suffix(3000))")
        await proxy.stop()
    }

    @Test func openConnectionsReturnToZeroAfterAbortedConnections() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        try await abort(proxyPort: proxy.port, originPort: origin.port, caFile: proxy.caCertificate, rounds: 30) {
            "\(proxy.events.suffix(20))"
        }
        #expect(await proxy.waitUntilIdle(timeout: .seconds(20)), "still open: \(proxy.server.openConnectionCount)")
        let after = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "localhost")])
        #expect(after.stdoutText == "hello from origin", "\(after)")
    }
}
