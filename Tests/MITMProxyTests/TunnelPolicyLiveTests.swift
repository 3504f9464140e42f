import Foundation
import MITMCore
import Testing

/// The policy seam decides once per TLS tunnel: an ignored host's tunnel is relayed untouched (the client
/// sees the origin's own certificate, no verdict is recorded), every other host is intercepted.
@Suite struct TunnelPolicyLiveTests {
    @Test func anIgnoredHostPassesThroughWithItsOwnCertificate() async throws {
        let proxy = try await ProxyHarness.start { $0.tunnelPolicy = TunnelPolicy(passThroughHosts: [try! HostPattern("localhost")]) }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let ignored = try await Curl.run(through: proxy, trustingProxyCA: false, ["--cacert", pki.root, origin.url("/hello", hostname: "localhost")])
        #expect(ignored.stdoutText == "hello from origin", "the origin's certificate reached the client: \(ignored)")
        let intercepted = try await Curl.run(through: proxy, trustingProxyCA: false, ["--cacert", pki.root, origin.url("/hello", hostname: "127.0.0.1")])
        #expect(!intercepted.succeeded, "127.0.0.1 is not ignored, so its certificate is forged: \(intercepted)")
        #expect(await Poll.until { proxy.server.verdict(for: "127.0.0.1") != nil })
        #expect(proxy.server.verdict(for: "localhost") == nil)
    }
}
