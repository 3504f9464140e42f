import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// Malformed input gets a status with the reason, or a logged close, never a crash: bad request lines and
/// headers (400), oversized header blocks (431), bad CONNECT targets (400), garbage or half a ClientHello
/// in a tunnel, and clients that vanish mid-handshake.
@Suite(.tags(.live), .skippedInFastTier) struct BadInputTests {
    /// Sends each payload on its own connection and prints the status line and the body's first line.
    private static let sendEach = """
        import socket, sys
        proxy = int(sys.argv[1])
        for payload in eval(sys.stdin.read()):
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=10)
            sock.sendall(payload)
            answer = b""
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
            head, _, body = answer.partition(b"\\r\\n\\r\\n")
            print(head.split(b"\\r\\n")[0].decode() + " | " + body.decode().split("\\n")[0])
        """

    private func answers(_ proxy: ProxyHarness, _ payloads: String) async throws -> [String] {
        let result = try await Subprocess.run(
            "python3", ["-c", Self.sendEach, String(proxy.port)], stdin: Array(payloads.utf8))
        #expect(result.succeeded, "\(result)")
        return result.stdoutText.split(separator: "\n").map(String.init)
    }

    @Test func malformedRequestsGetAStatusAndTheReason() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let lines = try await answers(
            proxy,
            """
            [b"GARBAGE\\r\\n\\r\\n",
             b"GET http://127.0.0.1:9/ HTTP/1.1\\r\\nNo Colon Here\\r\\n\\r\\n",
             b"GET http://127.0.0.1:9/ HTTP/1.1\\r\\nX-Big: " + b"a" * 70000 + b"\\r\\n\\r\\n",
             b"GET http://127.0.0.1:9/ HTTP/9.9\\r\\n\\r\\n",
             b"GET  http://127.0.0.1:9/ HTTP/1.1\\r\\n\\r\\n",
             b"POST http://127.0.0.1:9/ HTTP/1.1\\r\\nContent-Length: abc\\r\\n\\r\\n",
             b"GET ftp://127.0.0.1/ HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n"]
            """)
        let bad = "HTTP/1.1 400 Bad Request | mitm-proxy: 400 Bad Request: "
        #expect(
            lines == [
                bad + #"request line "GARBAGE" has no spaces"#,
                bad + "header line 1 has no colon",
                "HTTP/1.1 431 Request Header Fields Too Large | mitm-proxy: 431 Request Header Fields Too Large: "
                    + "message head is longer than 65536 bytes",
                "HTTP/1.1 505 HTTP Version Not Supported | mitm-proxy: 505 HTTP Version Not Supported: "
                    + #"HTTP version "HTTP/9.9" is not supported (only HTTP/1.0 and HTTP/1.1)"#,
                bad + #"request target "" is empty or has characters other than visible ASCII"#,
                bad + #"Content-Length "abc" is not a number"#,
                bad + #"URL scheme "ftp" is not supported (only http and https)"#,
            ])
        let logged = proxy.events.filter { if case .badRequest = $0 { true } else { false } }
        #expect(logged.count >= 6, "\(proxy.events)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func badConnectTargetsGet400() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let lines = try await answers(
            proxy,
            """
            [b"CONNECT localhost HTTP/1.1\\r\\n\\r\\n",
             b"CONNECT bad_host!:443 HTTP/1.1\\r\\n\\r\\n",
             b"CONNECT localhost:99999 HTTP/1.1\\r\\n\\r\\n",
             b"CONNECT :443 HTTP/1.1\\r\\n\\r\\n",
             b"CONNECT [::1:443 HTTP/1.1\\r\\n\\r\\n"]
            """)
        let bad = "HTTP/1.1 400 Bad Request | mitm-proxy: 400 Bad Request: "
        #expect(
            lines == [
                bad + #""localhost" has no port"#,
                bad + #"host "bad_host!" is not a valid host name"#,
                bad + #"port "99999" is not a number in 1...65535"#,
                bad + #"host "" is not a valid host name"#,
                bad + #"IPv6 address in "[::1:443" has no closing bracket"#,
            ])
        #expect(await proxy.waitUntilIdle())
    }

    @Test func garbageOrHalfAClientHelloInATunnelIsLoggedAndClosed() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            # TLS record header, then a handshake message that is not a ClientHello: closed by the proxy.
            sock = proxyclient.open_tunnel(proxy, "localhost", port)
            sock.sendall(b"\\x16\\x03\\x01\\x00\\x10" + b"\\xff" * 16)
            print("garbage", sock.recv(100))
            # Half a ClientHello, then the client goes away.
            sock = proxyclient.open_tunnel(proxy, "localhost", port)
            sock.sendall(b"\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xfc\\x03\\x03")
            sock.close()
            print("half hello sent")
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "garbage b''\nhalf hello sent\n", "\(result)")
        #expect(
            await Poll.until {
                proxy.events.filter { if case .clientTLSFailed = $0 { true } else { false } }.count == 2
            })
        let reasons = proxy.events.compactMap { if case .clientTLSFailed = $0 { $0.failureReason } else { nil } }
        #expect(reasons.contains { $0.contains("broken TLS ClientHello") }, "\(reasons)")
        #expect(reasons.contains { $0.contains("in the middle of its first message") }, "\(reasons)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func aClientThatVanishesMidHandshakeIsLoggedAndLeavesNothingOpen() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        // A complete ClientHello, then the client resets the connection without reading the proxy's answer.
        let script = """
            import socket, ssl, struct, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            context = ssl.create_default_context()  # once: loading the system's CAs twenty times is slow on a busy machine
            for _ in range(20):
                sock = proxyclient.open_tunnel(proxy, "localhost", port)
                incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
                tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
                try:
                    tls.do_handshake()
                except ssl.SSLWantReadError:
                    pass
                sock.sendall(outgoing.read())
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
            print("done")
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "done\n", "\(result)")
        #expect(
            await Poll.until {
                proxy.events.filter { if case .clientTLSFailed = $0 { true } else { false } }.count == 20
            },
            "\(proxy.events)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func randomBytesNeverBringTheProxyDown() async throws {
        let proxy = try await ProxyHarness.start { $0.handshakeTimeout = .seconds(2) }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import os, random, socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            random.seed(7)
            prefixes = [b"", b"GET http://127.0.0.1:%d/ HTTP/1.1\\r\\n" % port, b"\\x16\\x03\\x01"]
            for index in range(150):
                try:
                    if index % 3 == 2:
                        sock = proxyclient.open_tunnel(proxy, "localhost", port)
                    else:
                        sock = socket.create_connection(("127.0.0.1", proxy), timeout=5)
                    sock.sendall(random.choice(prefixes) + os.urandom(random.randrange(1, 3000)))
                    sock.close()
                except OSError:
                    pass
            print("sent")
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "sent\n", "\(result)")
        let after = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "localhost")])
        #expect(after.stdoutText == "hello from origin", "\(after)")
        #expect(
            await proxy.waitUntilIdle(timeout: .seconds(15)),
            "still open: \(proxy.server.openConnectionCount); events: \(proxy.events.suffix(40))")
    }

    @Test func aMalformedRequestInsideInterceptedTLSGets400OverTLS() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            tls.sendall(b"GET /hello HTTP/1.1\\r\\nBad Header\\r\\n\\r\\n")
            status, headers, body, _, _ = proxyclient.Reader(tls).response()
            print(status, headers.get("connection"), body.decode().strip())
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "400 close mitm-proxy: 400 Bad Request: header line 1 has no colon\n", "\(result)")
    }
}
