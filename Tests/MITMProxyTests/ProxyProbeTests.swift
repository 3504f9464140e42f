import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// Connections about the proxy itself stay out of the verdicts.
@Suite(.tags(.live), .skippedInFastTier) struct ProxyProbeTests {
    private func probes(_ events: [ProxyEvent]) -> [(ConnectionVerdict, ProxyProbe)] {
        events.compactMap { if case .proxyProbe(let record, let probe) = $0 { (record, probe) } else { nil } }
    }

    @Test func theTrustProbeIsAnsweredByTheProxyAndProvesTheClient() async throws {
        let pki = try await TestPKI.shared()
        let harness = try await ProxyHarness.start()
        defer { harness.stop() }
        let untrusting = try await Curl.run(
            through: harness, trustingProxyCA: false, ["--cacert", pki.root, "https://mitm.proxy/trusted"])
        #expect(untrusting.status == 60, "\(untrusting)")
        #expect(harness.server.ledger.provenClients.isEmpty)
        let page = try await Curl.run(through: harness, ["https://mitm.proxy/"])
        #expect(page.succeeded, "\(page)")
        #expect(
            page.stdoutText.contains("fetch(\"https://mitm.proxy/trusted\""),
            "the onboarding page checks the probe: \(page)")
        // The client is its address and its TLS fingerprint: curl's, on 127.0.0.1.
        #expect(await Poll.until { harness.server.ledger.provenClients.count == 1 })
        #expect(
            harness.server.ledger.provenClients.first?.hasPrefix("127.0.0.1 t13") == true,
            "\(harness.server.ledger.provenClients)")
        #expect(harness.server.hostVerdicts.isEmpty, "the proxy's own name never enters the verdicts")
        harness.server.flushEvents()
        #expect(
            !harness.events.contains { if case .upstreamFailed = $0 { true } else { false } }, "never dialled upstream")
        let seen = probes(harness.events)
        #expect(seen.map(\.1) == [.trust, .trust])
        #expect(seen.map(\.0.verdict.kind) == [.refused, .intercepted])
    }

    /// Issue 34, item 10: the probe is relayed untouched, so it shows the server's chain and pin, not a forgery.
    @Test func aPinsProbeThroughTheProxyIsNotTheAppsTraffic() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.resolveOverrides = ["pinned.test": "127.0.0.1"]
            $0.silenceWindow = .milliseconds(500)
        }
        defer { harness.stop() }
        let pins = try await Subprocess.run(
            try BuiltBinary.path(),
            [
                "pins", "--connect", "pinned.test:\(origin.port)", "--proxy", "127.0.0.1:\(harness.port)",
            ], timeout: .seconds(30))
        #expect(pins.succeeded, "\(pins)")
        let pki = try await TestPKI.shared()
        let direct = try await Subprocess.run(
            try BuiltBinary.path(), ["pins", pki.certificate(.origin)], timeout: .seconds(30))
        let originPin = try #require(
            direct.stdoutText.split(separator: "\n").first { $0.contains("SPKI-SHA256-BASE64") })
        #expect(pins.stdoutText.contains(originPin), "the server's own pin: \(pins)")
        #expect(!pins.stdoutText.contains("mitm-proxy CA") && !pins.stdoutText.contains("FORGED"), "\(pins)")
        #expect(await harness.server.settleVerdicts(timeout: .seconds(10)))
        #expect(harness.server.hostVerdicts.isEmpty, "\(harness.server.hostVerdicts)")
        harness.server.flushEvents()
        #expect(probes(harness.events).isEmpty)
        #expect(
            harness.events.contains {
                if case .tunnel(_, "pinned.test", _, _, _, _, true, _) = $0 { true } else { false }
            }, "\(harness.events)")
        let results = harness.server.evaluate([try Expectation(parsing: "refused:pinned.test")])
        #expect(results.map(\.met) == [false])
        #expect(results.first?.explanation.contains("unseen") == true)
        await origin.stop()
    }

    /// Wherever a mitm-proxy CA's certificate shows up, `pins` says loudly that it is a forgery, never a pin.
    @Test func aChainOfAMitmProxyCAIsFlaggedLoudly() async throws {
        let harness = try await ProxyHarness.start()
        defer { harness.stop() }
        let text = try await Subprocess.run(
            try BuiltBinary.path(), ["pins", harness.caCertificate], timeout: .seconds(30))
        #expect(text.succeeded, "\(text)")
        #expect(text.stdoutText.contains("WARNING: FORGED BY A MITM-PROXY CA (CN=mitm-proxy CA "), "\(text)")
        #expect(text.stdoutText.contains("NEVER pin them"), "\(text)")
        let json = try await Subprocess.run(
            try BuiltBinary.path(), ["pins", harness.caCertificate, "--format", "json"], timeout: .seconds(30))
        #expect(json.stdoutText.contains(#""forgedByMitmProxy" : true"#), "\(json)")
    }
}
