import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// CONNECT tunnels carrying TLS are intercepted: real clients that trust the proxy CA accept the forged
/// chain (curl, python's default context, strict `openssl verify`), clients that do not trust it fail,
/// clients without SNI still get a certificate, and ALPN offers the client only what the upstream chose
/// (the test origin speaks HTTP/1.1 only, so h2 is never offered).
@Suite(.tags(.live), .skippedInFastTier) struct InterceptionTests {
    @Test func curlTrustingTheProxyCAGetsTheOriginsResponse() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let result = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "localhost")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "hello from origin")
        let intercepted = await proxy.recorder.first { if case .intercepted = $0 { true } else { false } }
        guard case .intercepted(_, let host, let port, let version, let alpn)? = intercepted else {
            Issue.record("no interception in \(proxy.events)")
            return
        }
        #expect(host == "localhost" && port == Int(origin.port) && version == "TLSv1.3" && alpn == "http/1.1")
        let exchange = try #require(await proxy.recorder.first { if case .exchange = $0 { true } else { false } })
        guard case .exchange(let record) = exchange else { return }
        #expect(record.url == "https://localhost:\(origin.port)/hello")
        #expect(record.response?.status == 200)
        #expect(record.responseBodyBytes == 17)
    }

    @Test func curlThatDoesNotTrustTheProxyCAFailsAndTheProxySaysWhy() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        // It trusts the origin's real root, so only the forged certificate can be the problem.
        let result = try await Curl.run(
            through: proxy, trustingProxyCA: false,
            ["--cacert", pki.root, origin.url("/hello", hostname: "localhost")])
        #expect(result.status == 60, "\(result)")
        let failure = await proxy.recorder.first { if case .clientTLSFailed = $0 { true } else { false } }
        #expect(failure?.failureReason?.contains("unknown_ca") == true, "\(String(describing: failure))")
        #expect(!proxy.events.contains { if case .exchange = $0 { true } else { false } })
    }

    @Test(arguments: ["localhost", "127.0.0.1", "::1", "x.origin.test"])
    func pythonsDefaultContextAcceptsTheForgedChain(name: String) async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["x.origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start(host: name == "::1" ? "::1" : "127.0.0.1")
        let script = """
            import sys, proxyclient
            proxy, host, port, ca = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
            tls = proxyclient.tls_tunnel(proxy, host, port, ca, alpn=["h2", "http/1.1"])
            tls.sendall(proxyclient.request("GET", "/hello"))
            status, _, body, _, _ = proxyclient.Reader(tls).response()
            print(tls.version(), tls.selected_alpn_protocol(), status, body.decode())
            """
        let result = try await PythonClient.run(
            script, [String(proxy.port), name, String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "TLSv1.3 http/1.1 200 hello from origin\n", "\(result)")
    }

    /// The session ticket of a client's connection (sent with its first response) resumes its next connection to that
    /// host, each host presenting its own forged certificate from its own TLS context. Not a first contact's: its
    /// certificate was forged from the SNI before the upstream's names were known, and the next one carries them.
    @Test func aClientResumesItsTLSSessionOnItsNextConnectionToTheSameHost() async throws {
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["a.origin.test": "127.0.0.1", "b.origin.test": "127.0.0.1"]
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import sys, ssl, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            context = ssl.create_default_context(cafile=ca)
            sessions = {}
            for host in ["a.origin.test", "b.origin.test"] * 3:
                tunnel = proxyclient.open_tunnel(proxy, host, port)
                tls = context.wrap_socket(tunnel, server_hostname=host, session=sessions.get(host))
                tls.sendall(proxyclient.request("GET", "/hello", host=host))
                status, _, body, _, _ = proxyclient.Reader(tls).response()
                print(host, tls.version(), "resumed" if tls.session_reused else "full", status, body.decode())
                sessions[host] = tls.session
                tls.close()
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(
            result.stdoutText == """
                a.origin.test TLSv1.3 full 200 hello from origin
                b.origin.test TLSv1.3 full 200 hello from origin
                a.origin.test TLSv1.3 full 200 hello from origin
                b.origin.test TLSv1.3 full 200 hello from origin
                a.origin.test TLSv1.3 resumed 200 hello from origin
                b.origin.test TLSv1.3 resumed 200 hello from origin

                """, "\(result)")
    }

    @Test func opensslStrictVerificationAcceptsTheForgedLeaf() async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["api.origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        // A first contact is forged from the SNI while the upstream is reached (the name the client checks); the
        // upstream's names, learned then, join the certificate from the next connection on.
        var sessions: [OpenSSLClient.Session] = []
        for _ in 0..<2 {
            let session = try await OpenSSLClient.connect(
                through: proxy, to: "api.origin.test", port: origin.port,
                [
                    "-servername", "api.origin.test", "-CAfile", proxy.caCertificate, "-verify_return_error",
                ])
            #expect(session.verified, "\(session.text)")
            sessions.append(session)
        }
        let firstLeaf = try #require(sessions[0].leafPEM, "\(sessions[0].text)")
        let first = try await OpenSSLClient.verifyStrictly(
            firstLeaf, caFile: proxy.caCertificate, ["-verify_hostname", "api.origin.test"])
        #expect(first.succeeded, "\(first)")
        let leaf = try #require(sessions[1].leafPEM, "\(sessions[1].text)")
        for check in [
            ["-verify_hostname", "api.origin.test"], ["-verify_hostname", "origin.test"], ["-verify_ip", "127.0.0.1"],
        ] {
            let verified = try await OpenSSLClient.verifyStrictly(leaf, caFile: proxy.caCertificate, check)
            #expect(verified.succeeded, "\(check): \(verified)")
        }
        let wrongName = try await OpenSSLClient.verifyStrictly(
            leaf, caFile: proxy.caCertificate, ["-verify_hostname", "other.test"])
        #expect(!wrongName.succeeded)
        // The forged leaf carries the SNI plus the upstream certificate's names (see certs/ for the origin's).
        let text = try await OpenSSLClient.describe(leaf)
        for name in [
            "DNS:api.origin.test", "DNS:localhost", "DNS:origin.test", "DNS:*.origin.test", "DNS:pinned.test",
            "IP Address:127.0.0.1",
        ] {
            #expect(text.contains(name), "\(name) missing from\n\(text)")
        }
        #expect(text.contains("CA:FALSE") && text.contains("TLS Web Server Authentication"), "\(text)")
    }

    @Test func aTunnelWithoutSNIStillGetsACertificateForTheConnectHost() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let byName = try await OpenSSLClient.connect(
            through: proxy, to: "localhost", port: origin.port,
            [
                "-noservername", "-CAfile", proxy.caCertificate, "-verify_return_error", "-verify_hostname",
                "localhost",
            ])
        #expect(byName.verified, "\(byName.text)")
        let byAddress = try await OpenSSLClient.connect(
            through: proxy, to: "127.0.0.1", port: origin.port,
            [
                "-noservername", "-CAfile", proxy.caCertificate, "-verify_return_error", "-verify_ip", "127.0.0.1",
            ])
        #expect(byAddress.verified, "\(byAddress.text)")
    }

    @Test func alpnOffersTheClientOnlyWhatAnHTTP11UpstreamChose() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let both = try await OpenSSLClient.connect(
            through: proxy, to: "localhost", port: origin.port,
            [
                "-alpn", "h2,http/1.1", "-CAfile", proxy.caCertificate,
            ])
        #expect(both.alpn == "http/1.1", "\(both.text)")
        let h2Only = try await OpenSSLClient.connect(
            through: proxy, to: "localhost", port: origin.port,
            [
                "-alpn", "h2", "-CAfile", proxy.caCertificate,
            ])
        #expect(h2Only.text.contains("No ALPN negotiated"), "\(h2Only.text)")
        let curlHTTP2 = try await Curl.run(
            through: proxy, ["--http2", "-w", " %{http_version}", origin.url("/hello", hostname: "localhost")])
        #expect(curlHTTP2.stdoutText == "hello from origin 1.1", "\(curlHTTP2)")
    }

    @Test func forgedLeavesAreCachedPerNameSet() async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["a.origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        for _ in 0..<3 {
            let result = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "localhost")])
            #expect(result.succeeded, "\(result)")
        }
        #expect(proxy.server.forgedCertificateCount == 1)
        let other = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "a.origin.test")])
        #expect(other.succeeded, "\(other)")
        #expect(proxy.server.forgedCertificateCount == 2)
    }

    @Test func resolveMapsAHostNameForUpstreamConnections() async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["pinned.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let result = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "pinned.test")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "hello from origin")
    }
}
