import Foundation
import MITMCore
import MITMProxy
import MITMTLS
import Testing

/// Every verdict kind produced by a real client through a live proxy.
@Suite(.tags(.live), .skippedInFastTier) struct VerdictTests {
    struct Setup {
        let proxy: ProxyServer
        let origin: OriginServer
        let pki: TestPKI

        init(silenceWindow: Duration = .seconds(3)) async throws {
            pki = try await TestPKI.shared()
            origin = try await OriginServer.start(.tls(.origin))
            let root = pki.root
            proxy = try ProxyServer.forTesting { configuration in
                configuration.upstreamCAFiles = [root]
                configuration.resolveOverrides = [
                    "pinned.test": "127.0.0.1", "control.test": "127.0.0.1", "origin.test": "127.0.0.1",
                ]
                configuration.silenceWindow = silenceWindow
            }
            proxy.start()
        }

        var proxyURL: String { "http://127.0.0.1:\(proxy.port)" }

        func url(_ host: String, _ path: String = "/hello") -> String { "https://\(host):\(origin.port)\(path)" }

        /// The origin's key pin, as an app that pins the real server would ship it.
        func originPin() throws -> String {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.certificate(.origin))))
            return try X509Certificate.certificates(inFileBytes: bytes)[0].spkiSHA256Base64
        }

        func curl(_ arguments: [String]) async throws -> SubprocessResult {
            try await Subprocess.run(
                "/usr/bin/curl", ["-sS", "--max-time", "10", "--proxy", proxyURL] + arguments, timeout: .seconds(20))
        }

        func verdict(_ host: String) async throws -> ConnectionVerdict {
            _ = try #require(await proxy.waitForVerdict(host: host, timeout: .seconds(10)), "no verdict for \(host)")
            return try #require(proxy.connectionVerdicts.last { $0.host == host })
        }

        func stop() async {
            proxy.stop()
            await origin.stop()
        }
    }

    @Test func unpinnedCurlIsIntercepted() async throws {
        let setup = try await Setup()
        let result = try await setup.curl(["--cacert", setup.proxy.caCertificatePath, setup.url("control.test")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "hello from origin")
        let verdict = try await setup.verdict("control.test")
        #expect(verdict.verdict == Verdict(kind: .intercepted, reason: .applicationData))
        #expect(verdict.tlsVersion == "TLSv1.3")
        #expect(verdict.shownCertificatePin != (try setup.originPin()))
        await setup.stop()
    }

    @Test func curlPinningTheOriginKeyClosesAfterTheHandshake() async throws {
        let setup = try await Setup()
        let result = try await setup.curl([
            "--cacert", setup.proxy.caCertificatePath,
            "--pinnedpubkey", "sha256//\(try setup.originPin())", setup.url("pinned.test"),
        ])
        #expect(result.status == 90, "curl must fail its pin check: \(result)")
        let verdict = try await setup.verdict("pinned.test")
        #expect(verdict.verdict.kind == .refused)
        #expect(verdict.verdict.reason == .closedAfterHandshake)
        #expect(setup.proxy.verdict(for: "pinned.test")?.verdict == .refused)
        await setup.stop()
    }

    @Test func curlWithoutTheProxyCASendsUnknownCA() async throws {
        let setup = try await Setup()
        let result = try await setup.curl(["--cacert", setup.pki.root, setup.url("pinned.test")])
        #expect(result.status == 60, "\(result)")
        let verdict = try await setup.verdict("pinned.test")
        #expect(verdict.verdict == Verdict(kind: .refused, reason: .alert, alert: "unknown_ca"))
        await setup.stop()
    }

    @Test func pythonCheckingAnotherNameSendsBadCertificate() async throws {
        let setup = try await Setup()
        // No SNI (an IP literal as the name to verify), so the leaf is forged for the CONNECT host control.test,
        // and the client's hostname check fails on 127.0.0.9.
        let python = """
            import ssl, sys, proxyclient
            s = proxyclient.open_tunnel(\(setup.proxy.port), "control.test", \(setup.origin.port))
            context = ssl.create_default_context(cafile=sys.argv[1])
            try:
                wrapped = context.wrap_socket(s, server_hostname="127.0.0.9")
                print("accepted")
            except ssl.SSLCertVerificationError as error:
                print("rejected", error.verify_message)
            """
        let result = try await PythonClient.run(python, [setup.proxy.caCertificatePath], timeout: .seconds(20))
        #expect(result.stdoutText.hasPrefix("rejected"), "\(result.stderrText)")
        let verdict = try await setup.verdict("control.test")
        #expect(verdict.verdict == Verdict(kind: .refused, reason: .alert, alert: "bad_certificate"))
        await setup.stop()
    }

    @Test func aClientHangingUpMidHandshakeWithoutAnAlertIsClosedInHandshake() async throws {
        let setup = try await Setup()
        // Sends a real ClientHello, reads the proxy's flight (with the certificate), then closes: what Java and Node do.
        let python = """
            import ssl, proxyclient
            s = proxyclient.open_tunnel(\(setup.proxy.port), "pinned.test", \(setup.origin.port))
            incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            context = ssl.create_default_context()
            context.maximum_version = ssl.TLSVersion.TLSv1_2
            tls = context.wrap_bio(incoming, outgoing, server_hostname="pinned.test")
            try:
                tls.do_handshake()
            except ssl.SSLWantReadError:
                pass
            s.sendall(outgoing.read())
            received = b""
            while b"\\x0e\\x00\\x00\\x00" not in received:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
            print("got", len(received))
            s.close()
            """
        let result = try await PythonClient.run(python, timeout: .seconds(20))
        #expect(result.succeeded, "\(result)")
        let verdict = try await setup.verdict("pinned.test")
        #expect(verdict.verdict.kind == .refused)
        #expect(verdict.verdict.reason == .closedInHandshake)
        await setup.stop()
    }

    @Test func aClientThatStaysSilentAfterTheHandshakeIsInconclusive() async throws {
        let setup = try await Setup(silenceWindow: .milliseconds(300))
        // Completes the handshake, then waits (for its stdin to close) without sending anything.
        let python = """
            import ssl, sys, proxyclient
            s = proxyclient.open_tunnel(\(setup.proxy.port), "origin.test", \(setup.origin.port))
            tls = ssl.create_default_context(cafile=sys.argv[1]).wrap_socket(s, server_hostname="origin.test")
            print("handshake done", flush=True)
            sys.stdin.read()
            """
        let client = try ChildProcess(
            path: "/usr/bin/env", arguments: ["python3", "-c", python, setup.proxy.caCertificatePath],
            environment: ProcessInfo.processInfo.environment.merging(["PYTHONPATH": RepositoryLayout.fixtures]) { $1 },
            pipeStdin: true, inheritingStderr: true)
        let verdict = try await setup.verdict("origin.test")
        #expect(verdict.verdict == Verdict(kind: .inconclusive, reason: .idle))
        try client.input?.close()
        client.kill()
        await setup.stop()
    }
}
