import Foundation
import MITMCore
import MITMProxy
import Testing

/// Connections about the proxy itself stay out of the verdicts (issue 10, observations 4 and 7).
@Suite struct ProxyProbeTests {
    private func probes(_ events: [ProxyEvent]) -> [(ConnectionVerdict, ProxyProbe)] {
        events.compactMap { if case .proxyProbe(let record, let probe) = $0 { (record, probe) } else { nil } }
    }

    @Test func theTrustProbeIsAnsweredByTheProxyAndProvesTheClient() async throws {
        let pki = try await TestPKI.shared()
        let harness = try await ProxyHarness.start()
        defer { harness.stop() }
        let untrusting = try await Curl.run(through: harness, trustingProxyCA: false, ["--cacert", pki.root, "https://mitm.proxy/trusted"])
        #expect(untrusting.status == 60, "\(untrusting)")
        #expect(harness.server.ledger.provenClients.isEmpty)
        let page = try await Curl.run(through: harness, ["https://mitm.proxy/"])
        #expect(page.succeeded, "\(page)")
        #expect(page.stdoutText.contains("fetch(\"https://mitm.proxy/trusted\""), "the onboarding page checks the probe: \(page)")
        // The client is its address and its TLS fingerprint: curl's, on 127.0.0.1.
        #expect(await Poll.until { harness.server.ledger.provenClients.count == 1 })
        #expect(harness.server.ledger.provenClients.first?.hasPrefix("127.0.0.1 t13") == true, "\(harness.server.ledger.provenClients)")
        #expect(harness.server.hostVerdicts.isEmpty, "the proxy's own name never enters the verdicts")
        harness.server.flushEvents()
        #expect(!harness.events.contains { if case .upstreamFailed = $0 { true } else { false } }, "never dialled upstream")
        let seen = probes(harness.events)
        #expect(seen.map(\.1) == [.trust, .trust])
        #expect(seen.map(\.0.verdict.kind) == [.refused, .intercepted])
    }

    @Test func aPinsProbeThroughTheProxyIsNotTheAppsTraffic() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start { $0.resolveOverrides = ["pinned.test": "127.0.0.1"]; $0.silenceWindow = 0.5 }
        defer { harness.stop() }
        let pins = try await Subprocess.run(try BuiltBinary.path(), [
            "pins", "--connect", "pinned.test:\(origin.port)", "--proxy", "127.0.0.1:\(harness.port)",
        ], timeout: .seconds(30))
        #expect(pins.succeeded, "\(pins)")
        #expect(harness.server.settleVerdicts(timeout: 10))
        #expect(harness.server.hostVerdicts.isEmpty, "\(harness.server.hostVerdicts)")
        harness.server.flushEvents()
        #expect(probes(harness.events).map(\.1) == [.pins])
        let results = harness.server.evaluate([try Expectation(parsing: "refused:pinned.test")])
        #expect(results.map(\.met) == [false])
        #expect(results.first?.explanation.contains("unseen") == true)
        await origin.stop()
    }
}
