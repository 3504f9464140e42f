import Foundation
import MITMCore
@_spi(CommandLine) @_spi(Testing) import MITMProxy
@_spi(CommandLine) import MITMRecording
import Testing

/// A browser's spare connection is not a refusal: two real python connections
/// from one client to one host, one used, one closed right after its handshake.
@Suite(.tags(.live), .skippedInFastTier) struct SpareConnectionTests {
    private func run(spareClosesFirst: Bool) async throws -> (ProxyHarness, [ProxyEvent]) {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = ["open.origin.test": "127.0.0.1"]
            configuration.silenceWindow = .seconds(2)
        }
        // Both handshakes complete first; then the spare closes without a request, before or after the other one's request.
        let python = """
            import sys, proxyclient
            used = proxyclient.tls_tunnel(\(harness.port), "open.origin.test", \(origin.port), sys.argv[1])
            spare = proxyclient.tls_tunnel(\(harness.port), "open.origin.test", \(origin.port), sys.argv[1])
            def request():
                used.sendall(proxyclient.request("GET", "/hello", host="open.origin.test"))
                status, _, body, _, _ = proxyclient.Reader(used).response()
                print(status, body.decode())
            if \(spareClosesFirst ? "True" : "False"):
                spare.close()
                request()
            else:
                request()
                spare.close()
            used.close()
            """
        let result = try await PythonClient.run(python, [harness.caCertificate])
        #expect(result.stdoutText.contains("200 hello from origin"), "\(result)")
        #expect(await harness.server.settleVerdicts(timeout: .seconds(10)))
        harness.server.flushEvents()
        await origin.stop()
        return (harness, harness.events)
    }

    @Test(arguments: [true, false])
    func anUnusedSecondConnectionIsNotARefusal(spareClosesFirst: Bool) async throws {
        let (harness, events) = try await run(spareClosesFirst: spareClosesFirst)
        defer { harness.stop() }
        let verdicts = events.compactMap { event -> ConnectionVerdict? in
            if case .verdict(let record) = event, record.host == "open.origin.test" { return record }
            return nil
        }
        #expect(
            verdicts.map(\.verdict.kind).sorted { $0.rawValue < $1.rawValue } == [.intercepted, .unused], "\(verdicts)")
        #expect(!verdicts.contains { $0.verdict.kind == .refused }, "the events never call it a refusal")
        let host = try #require(harness.server.verdict(for: "open.origin.test"))
        #expect(host.verdict == .intercepted)
        #expect(VerdictText.counts(host) == "1 intercepted, 1 unused (unused-duplicate 1)")
        let console = ConsoleLog(verbosity: .normal)
        let lines = events.compactMap { console.line(for: $0) }.filter { $0.contains("open.origin.test") }
        #expect(lines.contains { $0.contains("UNUSED (unused-duplicate)") && $0.contains("not a refusal") }, "\(lines)")
        #expect(!lines.contains { $0.contains("REFUSED") }, "\(lines)")
    }

    @Test func aLoneConnectionClosedAfterTheHandshakeStaysARefusal() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = ["pinned.test": "127.0.0.1"]
            configuration.silenceWindow = .milliseconds(500)
        }
        defer { harness.stop() }
        let python = """
            import sys, proxyclient
            proxyclient.tls_tunnel(\(harness.port), "pinned.test", \(origin.port), sys.argv[1]).close()
            """
        let result = try await PythonClient.run(python, [harness.caCertificate])
        #expect(result.succeeded, "\(result)")
        #expect(await harness.server.settleVerdicts(timeout: .seconds(10)))
        #expect(harness.server.connectionVerdicts.map(\.verdict.kind) == [.refused])
        await origin.stop()
    }
}
