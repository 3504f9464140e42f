import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// SOCKS5 on the proxy's own port, driven by curl: by host name (`socks5h`) and by address (`socks5`), with and
/// without `--proxy-auth`, intercepted, refused by a pinning client, and recorded like an HTTP CONNECT.
@Suite(.tags(.live), .skippedInFastTier) struct SOCKS5Tests {
    private func curl(_ proxy: ProxyHarness, _ proxyURL: String, _ arguments: [String]) async throws -> SubprocessResult
    {
        try await Subprocess.run(
            "curl", ["-sS", "--max-time", "20", "--proxy", proxyURL, "--cacert", proxy.caCertificate] + arguments,
            timeout: .seconds(30))
    }

    @Test func bothSOCKS5FormsAreInterceptedWithAVerdictOnTheHTTPPort() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["control.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let byName = try await curl(
            proxy, "socks5h://127.0.0.1:\(proxy.port)", [origin.url("/hello", hostname: "control.test")])
        #expect(byName.succeeded && byName.stdoutText == "hello from origin", "\(byName)")
        // curl resolves the name itself and asks for the address; the SNI still names the host.
        let byAddress = try await curl(
            proxy, "socks5://127.0.0.1:\(proxy.port)",
            ["--resolve", "localhost:\(origin.port):127.0.0.1", origin.url("/hello", hostname: "localhost")])
        #expect(byAddress.succeeded && byAddress.stdoutText == "hello from origin", "\(byAddress)")
        let http = try await curl(proxy, proxy.url, [origin.url("/hello", hostname: "control.test")])
        #expect(http.succeeded, "the same port still speaks HTTP: \(http)")
        _ = await proxy.server.waitForVerdict(host: "localhost")
        #expect(proxy.server.verdict(for: "control.test")?.verdict == .intercepted)
        #expect(proxy.server.verdict(for: "localhost")?.verdict == .intercepted)
        let opened = proxy.events.compactMap { event -> String? in
            if case .connectionOpened(_, let host, let port, _) = event { "\(host):\(port)" } else { nil }
        }
        #expect(
            opened.contains("control.test:\(origin.port)") && opened.contains("127.0.0.1:\(origin.port)"), "\(opened)")
        let exchanges = proxy.events.compactMap { event -> String? in
            if case .exchange(let record) = event { record.request.target } else { nil }
        }
        #expect(
            exchanges.filter { $0.hasSuffix("/hello") }.count == 3,
            "each request is recorded as any intercepted one: \(exchanges)")
        await origin.stop()
    }

    @Test func aPinningClientOverSOCKS5IsRefused() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["pinned.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let pinned = try await curl(
            proxy, "socks5h://127.0.0.1:\(proxy.port)",
            [
                "--pinnedpubkey", "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                origin.url("/hello", hostname: "pinned.test"),
            ])
        #expect(pinned.status == 90, "curl fails its pin check: \(pinned)")
        _ = await proxy.server.waitForVerdict(host: "pinned.test")
        #expect(proxy.server.connectionVerdicts.last { $0.host == "pinned.test" }?.verdict.kind == .refused)
        await origin.stop()
    }

    @Test func proxyAuthIsAskedOfSOCKS5ClientsAndThePasswordIsNeverRecorded() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["control.test": "127.0.0.1"]
            $0.proxyCredentials = try? ProxyCredentials(parsing: "qa:s3cret-pass")
        }
        defer { proxy.stop() }
        let url = origin.url("/hello", hostname: "control.test")
        let without = try await curl(proxy, "socks5h://127.0.0.1:\(proxy.port)", [url])
        #expect(!without.succeeded && without.stdoutText.isEmpty, "\(without)")
        let wrong = try await curl(proxy, "socks5h://qa:guess@127.0.0.1:\(proxy.port)", [url])
        #expect(!wrong.succeeded && wrong.stdoutText.isEmpty, "\(wrong)")
        let right = try await curl(proxy, "socks5h://qa:s3cret-pass@127.0.0.1:\(proxy.port)", [url])
        #expect(right.succeeded && right.stdoutText == "hello from origin", "\(right)")
        let reasons = proxy.events.compactMap { event -> String? in
            if case .badRequest(_, _, let reason) = event { reason } else { nil }
        }
        #expect(reasons.contains { $0.contains("SOCKS5 authentication required") }, "\(reasons)")
        #expect(reasons.contains { $0.contains("SOCKS5 authentication failed") }, "\(reasons)")
        #expect(!"\(proxy.events)".contains("s3cret-pass") && !"\(proxy.events)".contains("guess"))
        await origin.stop()
    }

    @Test func aSOCKS5RequestForTheProxyItselfIsNotAllowed() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let loop = try await curl(proxy, "socks5://127.0.0.1:\(proxy.port)", ["https://127.0.0.1:\(proxy.port)/"])
        #expect(loop.status == 97, "curl reports the SOCKS5 refusal: \(loop)")
        let reasons = proxy.events.compactMap { event -> String? in
            if case .badRequest(_, _, let reason) = event { reason } else { nil }
        }
        #expect(reasons.contains { $0.hasPrefix("SOCKS5 CONNECT: ") }, "\(reasons)")
    }

    /// Issue 34, item 13: a SOCKS4 client is answered at once (SOCKS4's "rejected"), not left to the handshake timeout.
    @Test func aSOCKS4ClientIsRefusedAtOnce() async throws {
        // Left to the handshake timeout (60 s), curl would give up after its own 20 s (exit 28) without a SOCKS4 reply.
        let proxy = try await ProxyHarness.start { $0.handshakeTimeout = .seconds(60) }
        defer { proxy.stop() }
        let socks4 = try await curl(proxy, "socks4a://127.0.0.1:\(proxy.port)", ["https://origin.test/"])
        #expect(!socks4.succeeded && socks4.status != 28, "answered, not timed out: \(socks4)")
        #expect(socks4.stderrText.contains("SOCKS4"), "\(socks4)")
        proxy.server.flushEvents()
        let reasons = proxy.events.compactMap { event -> String? in
            if case .badRequest(_, _, let reason) = event { reason } else { nil }
        }
        #expect(reasons.contains { $0.hasPrefix("SOCKS4 is not supported") }, "\(reasons)")
    }
}
