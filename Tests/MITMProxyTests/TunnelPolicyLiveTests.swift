import Foundation
import MITMCore
import Testing

/// The policy seam decides once per TLS tunnel: an ignored host's tunnel is relayed untouched (the client
/// sees the origin's own certificate, no verdict is recorded), every other host is intercepted.
@Suite(.tags(.live), .skippedInFastTier) struct TunnelPolicyLiveTests {
    @Test func anIgnoredHostPassesThroughWithItsOwnCertificate() async throws {
        let proxy = try await ProxyHarness.start {
            $0.tunnelPolicy = TunnelPolicy(passThroughHosts: [try! HostPattern("localhost")])
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let ignored = try await Curl.run(
            through: proxy, trustingProxyCA: false, ["--cacert", pki.root, origin.url("/hello", hostname: "localhost")])
        #expect(ignored.stdoutText == "hello from origin", "the origin's certificate reached the client: \(ignored)")
        let intercepted = try await Curl.run(
            through: proxy, trustingProxyCA: false, ["--cacert", pki.root, origin.url("/hello", hostname: "127.0.0.1")])
        #expect(!intercepted.succeeded, "127.0.0.1 is not ignored, so its certificate is forged: \(intercepted)")
        #expect(await Poll.until { proxy.server.verdict(for: "127.0.0.1") != nil })
        #expect(proxy.server.verdict(for: "localhost") == nil)
    }

    /// `--intercept-hosts control.test`: control.test is shown the proxy's certificate and judged; pinned.test (same origin)
    /// gets the origin's own certificate, a `passthrough` tunnel event and no verdict. Both names resolve to 127.0.0.1.
    @Test func anInterceptListInterceptsItsHostsAndPassesEveryOtherHostThrough() async throws {
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["control.test": "127.0.0.1", "pinned.test": "127.0.0.1"]
            $0.tunnelPolicy = TunnelPolicy(interceptHosts: [try! HostPattern("control.test")])
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let bundle = TemporaryDirectory.path("both-roots") + ".pem"
        defer { try? FileManager.default.removeItem(atPath: bundle) }
        try
            (try String(contentsOfFile: pki.root, encoding: .utf8)
            + String(contentsOfFile: proxy.caCertificate, encoding: .utf8))
            .write(toFile: bundle, atomically: true, encoding: .utf8)
        let intercepted = try await Curl.run(
            through: proxy, trustingProxyCA: false,
            ["-v", "--cacert", bundle, origin.url("/hello", hostname: "control.test")])
        let passed = try await Curl.run(
            through: proxy, trustingProxyCA: false,
            ["-v", "--cacert", bundle, origin.url("/hello", hostname: "pinned.test")])
        #expect(
            intercepted.stdoutText == "hello from origin" && passed.stdoutText == "hello from origin",
            "\(intercepted)\n\(passed)")
        #expect(Self.issuer(in: intercepted).contains("mitm-proxy CA"), "\(intercepted.stderrText)")
        #expect(Self.issuer(in: passed).contains("mitm-proxy tests"), "the origin's own chain: \(passed.stderrText)")
        #expect(!Self.issuer(in: passed).contains("mitm-proxy CA"))
        #expect(await Poll.until { proxy.server.verdict(for: "control.test")?.verdict == .intercepted })
        let tunnel = await proxy.recorder.first {
            if case .tunnel(_, "pinned.test", _, _, _, _, true, _) = $0 { true } else { false }
        }
        #expect(tunnel != nil, "the passed-through tunnel is recorded as passthrough: \(proxy.events)")
        #expect(proxy.server.verdict(for: "pinned.test") == nil)
        await origin.stop()
    }

    /// curl -v's `issuer:` line for the server certificate.
    private static func issuer(in result: SubprocessResult) -> String {
        result.stderrText.split(separator: "\n").first { $0.contains("issuer:") }.map(String.init) ?? ""
    }
}
