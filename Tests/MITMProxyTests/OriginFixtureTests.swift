import Foundation
import Testing

/// Proves the live-test fixtures: the test PKI verifies, and origin.py serves every endpoint correctly to real clients.
@Suite(.tags(.live), .skippedInFastTier) struct OriginFixtureTests {
    private static let curl = "/usr/bin/curl"

    private func curl(_ arguments: [String], stdin: [UInt8]? = nil, trustingRoot: Bool = true) async throws
        -> SubprocessResult
    {
        var options = ["-sS", "--max-time", "20"]
        if trustingRoot {
            options += ["--cacert", try await TestPKI.shared().root]
        }
        return try await Subprocess.run(Self.curl, options + arguments, stdin: stdin)
    }

    /// Splits `curl -i` output into the head (status line and headers) and the body as received.
    private func splitResponse(_ bytes: [UInt8]) throws -> (head: String, body: ArraySlice<UInt8>) {
        let separator = Array("\r\n\r\n".utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw SubprocessError(description: "no end of headers in \(bytes.count) bytes")
        }
        return (String(decoding: bytes[..<start], as: UTF8.self), bytes[(start + separator.count)...])
    }

    private func headerLines(_ head: String) -> [String] {
        head.split(separator: "\r\n").map { $0.lowercased() }
    }

    private struct Digest: Decodable {
        var length: Int
        var sha256: String
    }

    // MARK: Test PKI

    @Test(arguments: [TestPKI.Leaf.origin, .originRSA])
    func opensslVerifiesTheOriginChainStrictly(leaf: TestPKI.Leaf) async throws {
        let pki = try await TestPKI.shared()
        for check in [
            ["-verify_hostname", "localhost"], ["-verify_hostname", "x.origin.test"], ["-verify_ip", "::1"],
        ] {
            let result = try await Subprocess.run(
                "openssl",
                [
                    "verify", "-x509_strict", "-purpose", "sslserver",
                ] + check + ["-CAfile", pki.root, "-untrusted", pki.intermediate, pki.certificate(leaf)])
            #expect(result.succeeded, "\(check): \(result)")
        }
    }

    @Test func opensslRejectsTheSelfSignedLeaf() async throws {
        let pki = try await TestPKI.shared()
        let result = try await Subprocess.run(
            "openssl",
            [
                "verify", "-CAfile", pki.root, "-untrusted", pki.intermediate, pki.certificate(.untrusted),
            ])
        #expect(!result.succeeded)
    }

    @Test(arguments: [TestPKI.Leaf.origin, .originRSA])
    func pythonSSLAcceptsTheChainWithTheTestRoot(leaf: TestPKI.Leaf) async throws {
        let origin = try await OriginServer.start(.tls(leaf))
        let script = """
            import socket, ssl, sys
            context = ssl.create_default_context(cafile=sys.argv[2])
            context.set_alpn_protocols(["h2", "http/1.1"])
            for server_name in sys.argv[3:]:
                with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as raw:
                    with context.wrap_socket(raw, server_hostname=server_name) as tls:
                        tls.sendall(b"GET /hello HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                        response = b""
                        while chunk := tls.recv(65536):
                            response += chunk
                        body = response.split(b"\\r\\n\\r\\n", 1)[1].decode()
                        print(server_name, tls.selected_alpn_protocol(), body)
            """
        let pki = try await TestPKI.shared()
        let names = ["localhost", "127.0.0.1", "::1", "pinned.test", "control.test", "x.origin.test"]
        let result = try await Subprocess.run("python3", ["-c", script, String(origin.port), pki.root] + names)
        let expected = names.map { "\($0) http/1.1 hello from origin\n" }.joined()
        #expect(result.stdoutText == expected, "\(result)")
    }

    // MARK: Endpoints over HTTPS with curl

    @Test func hello() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl([origin.url("/hello", hostname: "localhost")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "hello from origin")
    }

    @Test func bytesSendsTheExactPattern() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl([origin.url("/bytes/1048576", hostname: "localhost")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdout.count == 1_048_576)
        #expect(result.stdout == OriginServer.patternBytes(count: 1_048_576))
    }

    @Test func chunkedSendsChunksAndAChecksumTrailer() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl(["-i", "--raw", origin.url("/chunked/200000", hostname: "localhost")])
        #expect(result.succeeded, "\(result)")
        let (head, raw) = try splitResponse(result.stdout)
        #expect(headerLines(head).contains("transfer-encoding: chunked"))
        #expect(headerLines(head).contains("trailer: x-body-sha256"))
        #expect(!headerLines(head).contains { $0.hasPrefix("content-length:") })
        let chunked = try ChunkedBody(decoding: raw)
        #expect(chunked.body == OriginServer.patternBytes(count: 200_000))
        #expect(chunked.trailer("X-Body-SHA256") == (try await OpenSSLDigest.sha256Hex(chunked.body)))
    }

    @Test func digestOfATenMebibytePost() async throws {
        let origin = try await OriginServer.start()
        let body = TestBytes.random(count: 10 << 20)
        let result = try await curl(
            [
                "--data-binary", "@-", "-H", "Content-Type: application/octet-stream",
                origin.url("/digest", hostname: "localhost"),
            ], stdin: body)
        #expect(result.succeeded, "\(result)")
        let digest = try JSONDecoder().decode(Digest.self, from: Data(result.stdout))
        #expect(digest.length == 10 << 20)
        #expect(digest.sha256 == (try await OpenSSLDigest.sha256Hex(body)))
    }

    @Test func digestOfAChunkedPutWithExpectContinue() async throws {
        let origin = try await OriginServer.start()
        let body = OriginServer.patternBytes(count: 3_000_001)
        let result = try await curl(
            [
                "-X", "PUT", "--data-binary", "@-", "-H", "Transfer-Encoding: chunked",
                "-H", "Expect: 100-continue", origin.url("/digest", hostname: "localhost"),
            ],
            stdin: body)
        #expect(result.succeeded, "\(result)")
        let digest = try JSONDecoder().decode(Digest.self, from: Data(result.stdout))
        #expect(digest.length == body.count)
        #expect(digest.sha256 == (try await OpenSSLDigest.sha256Hex(body)))
    }

    @Test func headAnswersWithHeadersOnly() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl([
            "-I", origin.url("/bytes/1234", hostname: "localhost"),
            origin.url("/chunked/99", hostname: "localhost"),
        ])
        #expect(result.succeeded, "\(result)")
        let responses = result.stdoutText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        try #require(responses.count == 2, "\(result.stdoutText)")
        #expect(headerLines(responses[0]).contains("content-length: 1234"))
        #expect(headerLines(responses[1]).contains("transfer-encoding: chunked"))
        #expect(headerLines(responses[0]).first?.hasPrefix("http/1.1 200") == true)
    }

    @Test func statusCodesKeepTheConnectionUsable() async throws {
        let origin = try await OriginServer.start()
        let paths = ["/status/204", "/status/304", "/status/404", "/status/500", "/hello"]
        let result = try await curl(
            ["-w", "%{http_code} %{num_connects}\n", "-o", "/dev/null"]
                + paths.flatMap { [origin.url($0, hostname: "localhost"), "-o", "/dev/null"] }.dropLast(2))
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "204 1\n304 0\n404 0\n500 0\n200 0\n")
    }

    @Test func closeDelimitedBodyEndsWithTheConnection() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl(["-i", origin.url("/close-delimited/300000", hostname: "localhost")])
        #expect(result.succeeded, "\(result)")
        let (head, body) = try splitResponse(result.stdout)
        #expect(!headerLines(head).contains { $0.hasPrefix("content-length:") || $0.hasPrefix("transfer-encoding:") })
        #expect(Array(body) == OriginServer.patternBytes(count: 300_000))
    }

    @Test func headersEchoesTheRequestAsReceived() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl([
            "-H", "X-Probe: one", "-H", "x-probe: two", origin.url("/headers", hostname: "localhost"),
        ])
        #expect(result.succeeded, "\(result)")
        struct Echo: Decodable {
            var request_line: String
            var headers: [[String]]
        }
        let echo = try JSONDecoder().decode(Echo.self, from: Data(result.stdout))
        #expect(echo.request_line == "GET /headers HTTP/1.1")
        #expect(echo.headers.contains(["X-Probe", "one"]))
        #expect(echo.headers.contains(["x-probe", "two"]))
        #expect(echo.headers.contains(["Host", "localhost:\(origin.port)"]))
    }

    @Test func slowTricklesTheBody() async throws {
        let origin = try await OriginServer.start()
        let started = ContinuousClock.now
        let result = try await curl([origin.url("/slow/5000?ms=400", hostname: "localhost")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdout == OriginServer.patternBytes(count: 5000))
        #expect(ContinuousClock.now - started >= .milliseconds(350))
    }

    @Test func curlWithoutTheTestRootFailsVerification() async throws {
        let origin = try await OriginServer.start()
        let result = try await curl([origin.url("/hello", hostname: "localhost")], trustingRoot: false)
        #expect(result.status == 60, "\(result)")
    }

    @Test func untrustedOriginFailsVerificationEvenWithTheTestRoot() async throws {
        let origin = try await OriginServer.start(.tls(.untrusted))
        let result = try await curl([origin.url("/hello", hostname: "localhost")])
        #expect(result.status == 60, "\(result)")
        let insecure = try await curl([
            "--insecure", origin.url("/hello", hostname: "untrusted.test"),
            "--resolve", "untrusted.test:\(origin.port):127.0.0.1",
        ])
        #expect(insecure.stdoutText == "hello from origin")
    }

    // MARK: Other transports and lifecycle

    @Test func plainHTTPOrigin() async throws {
        let origin = try await OriginServer.start(.plainHTTP)
        #expect(origin.url("/hello") == "http://127.0.0.1:\(origin.port)/hello")
        let result = try await curl([origin.url("/hello")], trustingRoot: false)
        #expect(result.stdoutText == "hello from origin", "\(result)")
    }

    @Test func ipv6LoopbackOrigin() async throws {
        let origin = try await OriginServer.start(host: "::1")
        let result = try await curl([origin.url("/hello")])
        #expect(result.stdoutText == "hello from origin", "\(result)")
    }

    @Test(arguments: [OriginServer.Transport.plainHTTP, .tls(.origin)])
    func websocketUpgradeEchoesRawBytes(transport: OriginServer.Transport) async throws {
        let origin = try await OriginServer.start(transport)
        let script = """
            import socket, ssl, sys
            port, cafile = int(sys.argv[1]), sys.argv[2]
            connection = socket.create_connection(("127.0.0.1", port), timeout=10)
            if cafile != "-":
                connection = ssl.create_default_context(cafile=cafile).wrap_socket(connection, server_hostname="localhost")
            def read_until(marker, received=b""):
                while marker not in received:
                    data = connection.recv(65536)
                    if not data:
                        raise SystemExit("closed early after %r" % received[:200])
                    received += data
                return received
            connection.sendall(b"GET /ws HTTP/1.1\\r\\nHost: localhost\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\nearly")
            head, echoed = read_until(b"early").split(b"\\r\\n\\r\\n", 1)
            payload = bytes(range(256)) * 64
            connection.sendall(payload)
            echoed = read_until(b"early" + payload, echoed)
            if cafile == "-":
                connection.shutdown(socket.SHUT_WR)
                if connection.recv(1) != b"":
                    raise SystemExit("expected end of file after the half-close")
            print(head.split(b"\\r\\n", 1)[0].decode(), len(echoed))
            """
        let caFile = if case .tls = transport { try await TestPKI.shared().root } else { "-" }
        let result = try await Subprocess.run("python3", ["-c", script, String(origin.port), caFile])
        #expect(result.stdoutText == "HTTP/1.1 101 Switching Protocols 16389\n", "\(result)")
    }

    @Test func originExitsWhenItsStdinCloses() async throws {
        let result = try await Subprocess.run(
            "python3", [RepositoryLayout.originScript], stdin: [], timeout: .seconds(10))
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText.hasPrefix("PORT "))
    }

    @Test func stopEndsTheOrigin() async throws {
        let origin = try await OriginServer.start(.plainHTTP)
        #expect(origin.isRunning)
        await origin.stop()
        // The process is gone (reaped). Its port is not probed: with the suites running in parallel, another test's
        // server may already listen on it.
        #expect(!origin.isRunning)
    }
}
