import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import MITMTLS
import Testing

/// First contact: when the client's protocol is known before the upstream answers (it offers no h2, or the
/// run learned the upstream's choice), the client's handshake runs while the upstream is reached. Real clients check
/// what that changes and what it must not: the names, the relay, upstream failures, refusals, a changed protocol.
@Suite(.tags(.live), .skippedInFastTier) struct FirstContactTests {
    @Test func aFirstContactIsForgedFromTheSNIAndTheNextCarriesTheUpstreamsNames() async throws {
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["first.origin.test": "127.0.0.1", "other.origin.test": "127.0.0.1"]
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        var leaves: [String] = []
        for _ in 0..<2 {
            // No ALPN offered: both legs speak HTTP/1.1 whatever the upstream picks, so the handshakes overlap.
            let session = try await OpenSSLClient.connect(
                through: proxy, to: "first.origin.test", port: origin.port,
                ["-servername", "first.origin.test", "-CAfile", proxy.caCertificate, "-verify_return_error"])
            #expect(session.verified, "\(session.text)")
            leaves.append(try await OpenSSLClient.describe(try #require(session.leafPEM, "\(session.text)")))
        }
        #expect(leaves[0].contains("DNS:first.origin.test"), "\(leaves[0])")
        #expect(!leaves[0].contains("DNS:pinned.test"), "forged before the upstream answered:\n\(leaves[0])")
        for name in ["DNS:first.origin.test", "DNS:origin.test", "DNS:*.origin.test", "DNS:pinned.test"] {
            #expect(leaves[1].contains(name), "\(name) missing from the second leaf\n\(leaves[1])")
        }
        let relayed = try await Curl.run(
            through: proxy, ["--http1.1", origin.url("/hello", hostname: "other.origin.test")])
        #expect(relayed.stdoutText == "hello from origin", "\(relayed)")
    }

    @Test func http2IsOverlappedOnceTheUpstreamsChoiceIsKnown() async throws {
        let origin = try await OriginServer.start(.tls(.origin), script: RepositoryLayout.h2OriginScript)
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        // `/goaway` ends each upstream connection, so that the next client gets a fresh one (not the shared one).
        for round in 0..<2 {
            let result = try await Curl.run(
                through: proxy, ["-w", " %{http_version} %{http_code}", origin.url("/goaway", hostname: "origin.test")])
            #expect(result.stdoutText == "bye 2 200", "round \(round): \(result)")
        }
    }

    @Test func theClientsHandshakeDoesNotWaitForAnUpstreamThatSaysNothing() async throws {
        // One handshake after the other, the client would get no certificate before the upstream's 60 s ran out.
        let proxy = try await ProxyHarness.start { $0.handshakeTimeout = .seconds(60) }
        defer { proxy.stop() }
        for upstream in [try UnansweredPort(), try UnansweredPort(acceptsConnections: true)] {
            let session = try await OpenSSLClient.connect(
                through: proxy, to: "localhost", port: upstream.port,
                ["-servername", "localhost", "-CAfile", proxy.caCertificate, "-verify_return_error"])
            #expect(session.verified, "\(session.text)")
        }
    }

    @Test func anUpstreamThatNeverFinishesTLSAfterTheOverlapGetsA502AndItsUpstreamFailure() async throws {
        let proxy = try await ProxyHarness.start { $0.handshakeTimeout = .seconds(2) }
        defer { proxy.stop() }
        let silent = try UnansweredPort(acceptsConnections: true)
        let result = try await Curl.run(
            through: proxy, ["--http1.1", "-w", " %{http_code}", "https://localhost:\(silent.port)/"])
        #expect(result.stdoutText.hasSuffix(" 502"), "\(result)")
        #expect(result.stdoutText.contains("TLS handshake timed out"), "\(result)")
        let failed = await proxy.recorder.first {
            guard case .upstreamFailed(_, "localhost", let port, let reason) = $0 else { return false }
            return port == Int(silent.port) && reason.contains("TLS handshake timed out")
        }
        #expect(failed != nil, "\(proxy.events)")
        #expect(try await verdict(of: proxy)?.kind == .intercepted)
    }

    @Test func anUnreachableUpstreamAfterTheOverlapGetsA502NamingWhy() async throws {
        let proxy = try await ProxyHarness.start { $0.handshakeTimeout = .seconds(2) }
        defer { proxy.stop() }
        // Connects to it hang: the connect fails (times out) after the client's handshake.
        let unreachable = try UnansweredPort()
        let result = try await Curl.run(
            through: proxy, ["--http1.1", "-w", " %{http_code}", "https://localhost:\(unreachable.port)/"])
        #expect(result.stdoutText.hasSuffix(" 502"), "\(result)")
        let failure = await proxy.recorder.first {
            guard case .upstreamFailed(_, "localhost", let port, _) = $0 else { return false }
            return port == Int(unreachable.port)
        }
        let reason = try #require(failure?.failureReason, "\(proxy.events)")
        #expect(result.stdoutText.contains(reason), "\(result) should name \(reason)")
        #expect(try await verdict(of: proxy)?.kind == .intercepted)
    }

    @Test func aClientThatChecksItsPinAfterTheHandshakeStillReadsRefused() async throws {
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["pinned.test": "127.0.0.1"]
            $0.silenceWindow = .milliseconds(300)
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.certificate(.origin))))
        let pin = try X509Certificate.certificates(inFileBytes: bytes)[0].spkiSHA256Base64
        let result = try await Curl.run(
            through: proxy,
            ["--http1.1", "--pinnedpubkey", "sha256//\(pin)", origin.url("/hello", hostname: "pinned.test")])
        #expect(result.status == 90, "\(result)")
        let verdict = try await verdict(of: proxy)
        #expect(verdict?.kind == .refused && verdict?.reason == .closedAfterHandshake, "\(String(describing: verdict))")
    }

    @Test func aClientThatRefusesTheCAStillReadsRefused() async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["pinned.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let result = try await Curl.run(
            through: proxy, trustingProxyCA: false, ["--http1.1", origin.url("/hello", hostname: "pinned.test")])
        #expect(result.status == 60, "\(result)")
        let verdict = try await verdict(of: proxy)
        #expect(verdict?.kind == .refused && verdict?.alert == "unknown_ca", "\(String(describing: verdict))")
    }

    @Test func anUpstreamThatChangedItsLearnedProtocolGetsA502AndTheNextConnectionWorks() async throws {
        let origin = try await ScriptedOrigin.start("h2-once", .tls(.origin))
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let url = origin.url("/", hostname: "origin.test")
        // h2 offered, nothing learned: one handshake after the other; the upstream chose h2, then hung up.
        _ = try await Curl.run(through: proxy, [url])
        let learned = await proxy.recorder.first {
            if case .intercepted(_, _, _, _, "h2") = $0 { true } else { false }
        }
        #expect(learned != nil, "\(proxy.events)")
        // Learned h2: the client is offered h2 at once, and the upstream now chooses http/1.1.
        let changed = try await Curl.run(through: proxy, ["-w", " %{http_version} %{http_code}", url])
        #expect(changed.stdoutText.contains("changed its protocol"), "\(changed)")
        #expect(changed.stdoutText.hasSuffix(" 2 502"), "\(changed)")
        let reported = proxy.events.contains {
            guard case .upstreamFailed(_, "origin.test", _, let reason) = $0 else { return false }
            return reason.contains("changed its protocol")
        }
        #expect(reported, "\(proxy.events)")
        // The memo holds the new choice: the next client offering h2 gets HTTP/1.1 from the start.
        let next = try await Curl.run(through: proxy, ["-w", " %{http_version} %{http_code}", url])
        #expect(next.stdoutText == "ok 1.1 200", "\(next)")
    }

    /// The first verdict the proxy published.
    private func verdict(of proxy: ProxyHarness) async throws -> Verdict? {
        let event = await proxy.recorder.first { if case .verdict = $0 { true } else { false } }
        guard case .verdict(let record)? = event else { return nil }
        return record.verdict
    }
}
