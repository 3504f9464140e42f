import Foundation
import MITMCore
import Testing

/// Absolute-form plain HTTP requests (`GET http://host/path`) are relayed to the origin in origin-form and
/// logged; one client connection can reach several origins; the proxy serves its own CA pages.
@Suite(.tags(.live), .skippedInFastTier) struct PlainProxyTests {
    @Test func anAbsoluteFormGetIsRelayedAndLogged() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let result = try await Curl.run(through: proxy, [origin.url("/hello")])
        #expect(result.stdoutText == "hello from origin", "\(result)")
        let record = try #require(await proxy.recorder.first { if case .exchange = $0 { true } else { false } })
        guard case .exchange(let exchange) = record else { return }
        #expect(exchange.url == "http://127.0.0.1:\(origin.port)/hello")
        #expect(exchange.scheme == "http" && exchange.response?.status == 200 && exchange.responseBodyBytes == 17)
    }

    @Test func theOriginSeesOriginFormWithoutProxyHeaders() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let result = try await Curl.run(
            through: proxy, ["-H", "Proxy-Authorization: Basic eDp5", origin.url("/headers?x=1")])
        let echoed = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        #expect(echoed?["request_line"] as? String == "GET /headers?x=1 HTTP/1.1", "\(result)")
        let fields = (echoed?["headers"] as? [[String]]) ?? []
        #expect(!fields.contains { $0[0].lowercased().hasPrefix("proxy-") }, "\(fields)")
        #expect(fields.contains { $0[0].lowercased() == "host" && $0[1] == "127.0.0.1:\(origin.port)" }, "\(fields)")
    }

    @Test func aTenMebibytePostAndAChunkedDownloadArriveIntact() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let body = TestBytes.random(count: 10 * 1_048_576)
        let post = try await Curl.run(through: proxy, ["--data-binary", "@-", origin.url("/digest")], stdin: body)
        #expect(post.stdoutText.contains("\"length\": \(body.count)"), "\(post)")
        #expect(post.stdoutText.contains(try await OpenSSLDigest.sha256Hex(body)))
        let chunked = try await Curl.run(through: proxy, [origin.url("/chunked/1500000")])
        #expect(chunked.stdout.count == 1_500_000, "\(chunked)")
        #expect(chunked.stdout.elementsEqual(OriginServer.patternBytes(count: 1_500_000)))
        let closeDelimited = try await Curl.run(through: proxy, [origin.url("/close-delimited/700000")])
        #expect(closeDelimited.stdout.count == 700_000, "\(closeDelimited)")
    }

    @Test func oneClientConnectionReachesTwoOriginsInTurn() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let first = try await OriginServer.start(.plainHTTP)
        let second = try await OriginServer.start(.plainHTTP)
        let script = """
            import hashlib, socket, sys, proxyclient
            proxy, ports = int(sys.argv[1]), [int(p) for p in sys.argv[2:]]
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            reader = proxyclient.Reader(sock)
            for port, path in [(ports[0], "/hello"), (ports[1], "/chunked/40000"), (ports[0], "/bytes/5"), (ports[0], "/status/204")]:
                sock.sendall(proxyclient.request("GET", "http://127.0.0.1:%d%s" % (port, path), host="127.0.0.1:%d" % port))
                status, headers, body, trailers, _ = reader.response()
                print(port == ports[0], path, status, len(body), [name for name, _ in trailers])
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(first.port), String(second.port)])
        #expect(
            result.stdoutText == """
                True /hello 200 17 []
                False /chunked/40000 200 40000 ['X-Body-SHA256']
                True /bytes/5 200 5 []
                True /status/204 204 0 []

                """, "\(result)")
    }

    @Test func pipelinedPlainRequestsAreAnsweredInOrder() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let script = """
            import socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            paths = [("GET", "/bytes/100000"), ("HEAD", "/hello"), ("GET", "/status/304"), ("GET", "/chunked/1000")]
            sock.sendall(b"".join(proxyclient.request(m, "http://127.0.0.1:%d%s" % (port, p)) for m, p in paths))
            reader = proxyclient.Reader(sock)
            for method, path in paths:
                status, _, body, _, _ = reader.response(method)
                print(path, status, len(body))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(
            result.stdoutText == "/bytes/100000 200 100000\n/hello 200 0\n/status/304 304 0\n/chunked/1000 200 1000\n",
            "\(result)")
    }

    @Test func aPlainWebSocketUpgradeRelaysRawBytesUntilHalfClose() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let script = """
            import os, socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            sock.sendall(proxyclient.request("GET", "http://127.0.0.1:%d/ws" % port,
                                             headers=[("Upgrade", "websocket"), ("Connection", "Upgrade")]))
            reader = proxyclient.Reader(sock)
            status, _, _, _, _ = reader.response()
            sent = os.urandom(200000)
            sock.sendall(sent)
            sock.shutdown(socket.SHUT_WR)
            echoed = reader.until_eof()
            print(status, echoed == sent)
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "101 True\n", "\(result); events \(proxy.events)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func theProxyServesItsCACertificatePages() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let pem = try await Curl.run(through: proxy, ["http://mitm.proxy/ca.pem"])
        #expect(pem.stdout == Array(try String(contentsOfFile: proxy.caCertificate, encoding: .utf8).utf8), "\(pem)")
        let der = try await Curl.run(through: proxy, ["http://mitm.proxy/ca.cer"])
        let converted = try await Subprocess.run(
            "openssl", ["x509", "-inform", "DER", "-noout", "-subject"], stdin: der.stdout)
        #expect(converted.stdoutText.contains("mitm-proxy CA"), "\(converted)")
        let index = try await Curl.run(through: proxy, ["-w", " %{http_code}", "http://mitm.proxy/"])
        #expect(index.stdoutText.contains("ca.pem") && index.stdoutText.hasSuffix(" 200"))
    }

    @Test func pipelinedRequestsToTwoOriginsAreAnsweredInOrder() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let first = try await OriginServer.start(.plainHTTP)
        let second = try await OriginServer.start(.plainHTTP)
        let script = """
            import socket, sys, proxyclient
            proxy, a, b = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            requests = [(a, "/hello"), (b, "/bytes/5"), (a, "/chunked/10"), (b, "/hello")]
            sock.sendall(b"".join(proxyclient.request("GET", "http://127.0.0.1:%d%s" % (port, path)) for port, path in requests))
            reader = proxyclient.Reader(sock)
            for port, path in requests:
                status, _, body, _, _ = reader.response()
                print("a" if port == a else "b", path, status, len(body))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(first.port), String(second.port)])
        #expect(
            result.stdoutText == "a /hello 200 17\nb /bytes/5 200 5\na /chunked/10 200 10\nb /hello 200 17\n",
            "\(result)")
    }
}
