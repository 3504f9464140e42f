import Foundation
import MITMCore
import Testing

/// HTTP/1.1 inside intercepted TLS, relayed both ways: uploads, chunked bodies with trailers, keep-alive,
/// pipelining, close-delimited responses, bodiless responses, `100-continue` and WebSocket upgrades.
@Suite(.tags(.live), .skippedInFastTier) struct HTTP1RelayTests {
    private struct Digest: Decodable {
        var length: Int
        var sha256: String
    }

    @Test func aTenMebibytePostArrivesIntact() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let body = TestBytes.random(count: 10 * 1_048_576)
        let result = try await Curl.run(
            through: proxy, ["--data-binary", "@-", origin.url("/digest", hostname: "localhost")], stdin: body)
        #expect(result.succeeded, "\(result)")
        let digest = try JSONDecoder().decode(Digest.self, from: Data(result.stdout))
        #expect(digest.length == body.count)
        #expect(digest.sha256 == (try await OpenSSLDigest.sha256Hex(body)))
        let record = try #require(proxy.recorder.exchanges.first)
        #expect(record.requestBodyBytes == body.count)
    }

    @Test func aChunkedUploadArrivesIntact() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let body = TestBytes.random(count: 3_000_001)
        let result = try await Curl.run(
            through: proxy,
            [
                "-H", "Transfer-Encoding: chunked", "--data-binary", "@-", origin.url("/digest", hostname: "localhost"),
            ], stdin: body)
        let digest = try JSONDecoder().decode(Digest.self, from: Data(result.stdout))
        #expect(digest.length == body.count, "\(result)")
        #expect(digest.sha256 == (try await OpenSSLDigest.sha256Hex(body)))
    }

    @Test func aChunkedResponseKeepsItsFramingAndTrailer() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import hashlib, sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            tls.sendall(proxyclient.request("GET", "/chunked/1000000"))
            status, headers, body, trailers, _ = proxyclient.Reader(tls).response()
            trailer = dict(trailers).get("X-Body-SHA256")
            print(status, headers["transfer-encoding"], len(body), body == proxyclient.pattern(1000000),
                  trailer == hashlib.sha256(body).hexdigest())
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "200 chunked 1000000 True True\n", "\(result)")
        let curl = try await Curl.run(
            through: proxy, ["-o", "-", origin.url("/chunked/2000000", hostname: "localhost")])
        #expect(curl.succeeded, "\(curl)")
        #expect(curl.stdout.count == 2_000_000)
        #expect(curl.stdout.elementsEqual(OriginServer.patternBytes(count: 2_000_000)))
    }

    @Test func keepAliveCarriesSeveralRequestsOverOneInterception() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let urls = ["/hello", "/bytes/100000", "/chunked/50000", "/status/404"].map {
            origin.url($0, hostname: "localhost")
        }
        let result = try await Curl.run(
            through: proxy, urls.flatMap { ["-o", "/dev/null", $0] } + ["-w", "%{http_code}:%{num_connects} "])
        #expect(result.stdoutText == "200:1 200:0 200:0 404:0 ", "\(result)")
        #expect(await Poll.until { proxy.recorder.exchanges.count == 4 })
        let interceptions = proxy.events.filter { if case .intercepted = $0 { true } else { false } }
        #expect(interceptions.count == 1)
        #expect(Set(proxy.recorder.exchanges.map(\.connectionID)).count == 1)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            requests = [("GET", "/bytes/70000"), ("HEAD", "/bytes/10"), ("GET", "/chunked/30000"),
                        ("GET", "/status/204"), ("GET", "/status/304"), ("GET", "/hello")]
            tls.sendall(b"".join(proxyclient.request(method, path) for method, path in requests))
            reader = proxyclient.Reader(tls)
            for method, path in requests:
                status, headers, body, _, _ = reader.response(method)
                print(method, path, status, len(body), headers.get("content-length", "-"))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(
            result.stdoutText == """
                GET /bytes/70000 200 70000 70000
                HEAD /bytes/10 200 0 10
                GET /chunked/30000 200 30000 -
                GET /status/204 204 0 -
                GET /status/304 304 0 -
                GET /hello 200 17 17

                """, "\(result)")
    }

    @Test func aCloseDelimitedResponseEndsWithTheConnection() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            tls.sendall(proxyclient.request("GET", "/close-delimited/500000"))
            status, headers, body, _, _ = proxyclient.Reader(tls).response()
            print(status, "content-length" in headers, len(body), body == proxyclient.pattern(500000))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "200 False 500000 True\n", "\(result)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func expect100ContinueWaitsForTheOriginsGoAhead() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import hashlib, json, sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            body = proxyclient.pattern(200000)
            tls.sendall(b"POST /digest HTTP/1.1\\r\\nHost: x\\r\\nExpect: 100-continue\\r\\nContent-Length: 200000\\r\\n\\r\\n")
            reader = proxyclient.Reader(tls)
            interim, _, _ = reader.head()
            tls.sendall(body)
            status, _, answer, _, _ = reader.response("POST")
            digest = json.loads(answer)
            print(interim, status, digest["length"], digest["sha256"] == hashlib.sha256(body).hexdigest())
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "100 200 200000 True\n", "\(result)")
    }

    @Test func aWebSocketUpgradeBecomesARawByteRelay() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import os, sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            tls.sendall(proxyclient.request("GET", "/ws", headers=[("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                                   ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")]))
            reader = proxyclient.Reader(tls)
            status, headers, _, _, _ = reader.response()
            sent = os.urandom(300000)
            tls.sendall(sent)
            echoed = reader.exactly(len(sent))
            print(status, headers["sec-websocket-accept"], echoed == sent)
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "101 s3pPLMBiTxaQ9kYGzzhZRbK+xOo= True\n", "\(result)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func requestHeadersReachTheOriginAsSent() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let result = try await Curl.run(
            through: proxy,
            [
                "-H", "X-First: 1", "-H", "x-second:  two words", origin.url("/headers?q=a%20b", hostname: "localhost"),
            ])
        let echoed = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        #expect(echoed?["request_line"] as? String == "GET /headers?q=a%20b HTTP/1.1", "\(result)")
        let names = (echoed?["headers"] as? [[String]])?.map { $0[0] } ?? []
        #expect(names.contains("X-First") && names.contains("x-second"), "\(names)")
        #expect(!names.contains { $0.lowercased().hasPrefix("proxy-") })
    }

    @Test func aRequestHeadLargerThanATLSRecordArrivesWhole() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let value = String(repeating: "v", count: 40_000)
        let result = try await Curl.run(
            through: proxy, ["-H", "X-Big: \(value)", origin.url("/headers", hostname: "localhost")])
        let echoed = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        let fields = (echoed?["headers"] as? [[String]]) ?? []
        #expect(fields.contains { $0[0] == "X-Big" && $0[1] == value }, "\(result.stdoutText.prefix(300))")
    }
}
