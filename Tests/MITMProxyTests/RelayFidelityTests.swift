import Foundation
import MITMCore
import Testing

/// What the relay forwards is what was sent, minus exactly what RFC 9110/9112 tell a proxy to remove:
/// no invented bytes, no transcoding, no lost request on a half-close, no trap on an unrequested response.
@Suite(.tags(.live), .skippedInFastTier) struct RelayFidelityTests {
    @Test func aChunkedHeadResponseGetsNoInventedBody() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await ScriptedOrigin.start("chunked-head")
        let script = """
            import socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            url = "http://127.0.0.1:%d/x" % port
            sock.sendall(proxyclient.request("HEAD", url) + proxyclient.request("GET", url))
            reader = proxyclient.Reader(sock)
            status, _, fields = reader.head()
            print(status, dict((k.lower(), v) for k, v in fields).get("transfer-encoding"))
            status, _, fields = reader.head()
            print(status, reader.exactly(5))
            sock.settimeout(0.5)
            try:
                print("extra", reader.buffer + sock.recv(100))
            except socket.timeout:
                print("nothing more")
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "200 chunked\n200 b'hello'\nnothing more\n", "\(result)")
    }

    @Test func aChunked304InsideATunnelGetsNoInventedBody() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await ScriptedOrigin.start("chunked-304", .tls(.origin))
        let script = """
            import sys, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            tls.sendall(proxyclient.request("GET", "/a", headers=[("If-None-Match", '"v1"')]) + proxyclient.request("GET", "/b"))
            reader = proxyclient.Reader(tls)
            status, _, _ = reader.head()
            print(status)
            status, _, _ = reader.head()
            print(status, reader.exactly(5))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "304\n200 b'fresh'\n", "\(result)")
    }

    @Test func aPlainRequestFollowedByAHalfCloseIsStillAnswered() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let script = """
            import socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            refused = socket.socket(); refused.bind(("127.0.0.1", 0)); closed_port = refused.getsockname()[1]; refused.close()
            results = []
            for attempt in range(20):
                for method, target, body in [("GET", "http://127.0.0.1:%d/hello" % port, b""),
                                             ("POST", "http://127.0.0.1:%d/digest" % port, b"abc"),
                                             ("GET", "http://127.0.0.1:%d/x" % closed_port, b"")]:
                    sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
                    sock.sendall(proxyclient.request(method, target, body=body))
                    sock.shutdown(socket.SHUT_WR)
                    answer = proxyclient.Reader(sock).until_eof()
                    results.append(answer.split(b"\\r\\n", 1)[0].decode())
                    sock.close()
            print(sorted(set(results)), len(results))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "['HTTP/1.1 200 OK', 'HTTP/1.1 502 Bad Gateway'] 60\n", "\(result)")
    }

    @Test func headerBytesThatAreNotUTF8ReachTheOriginUnchanged() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let plain = try await ScriptedOrigin.start("record")
        let tls = try await ScriptedOrigin.start("record", .tls(.origin))
        let script = """
            import socket, sys, proxyclient
            proxy, plain, tls_port, ca = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
            raw = b"X-Raw: \\xe9\\xff\\x80 caf\\xc3\\xa9\\r\\n"
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            sock.sendall(b"GET http://127.0.0.1:%d/ HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\n%s\\r\\n" % (plain, plain, raw))
            _, _, body, _, _ = proxyclient.Reader(sock).response()
            print(raw in body)
            tls = proxyclient.tls_tunnel(proxy, "localhost", tls_port, ca)
            tls.sendall(b"GET / HTTP/1.1\\r\\nHost: localhost\\r\\n%s\\r\\n" % raw)
            _, _, body, _, _ = proxyclient.Reader(tls).response()
            print(raw in body)
            """
        let result = try await PythonClient.run(
            script, [String(proxy.port), String(plain.port), String(tls.port), proxy.caCertificate])
        #expect(result.stdoutText == "True\nTrue\n", "\(result)")
    }

    /// A head nothing changes on the way goes on byte for byte (spacing, a tab, a reason phrase that is not UTF-8),
    /// both ways; one the proxy must change (`Connection: close` is not forwarded: persistence is per hop) is
    /// written anew.
    @Test func headsNothingChangesGoOnByteForByte() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let record = try await ScriptedOrigin.start("record", .tls(.origin))
        let asSent = try await ScriptedOrigin.start("as-sent", .tls(.origin))
        let script = """
            import sys, proxyclient
            proxy, record, as_sent, ca = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
            tls = proxyclient.tls_tunnel(proxy, "localhost", record, ca)
            head = b"GET /a HTTP/1.1\\r\\nHost: localhost\\r\\nX-Spaced:   as sent  \\r\\nx-lower:v\\r\\n\\r\\n"
            tls.sendall(head)
            _, _, body, _, _ = proxyclient.Reader(tls).response()
            print(body == head)
            tls.sendall(b"GET /b HTTP/1.1\\r\\nHost: localhost\\r\\nX-Spaced:   as sent  \\r\\nConnection: close\\r\\n\\r\\n")
            _, _, body, _, _ = proxyclient.Reader(tls).response()
            print(body == b"GET /b HTTP/1.1\\r\\nHost: localhost\\r\\nX-Spaced: as sent\\r\\n\\r\\n")
            other = proxyclient.tls_tunnel(proxy, "localhost", as_sent, ca)
            other.sendall(b"GET / HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n")
            reader = proxyclient.Reader(other)
            while b"\\r\\n\\r\\n" not in reader.buffer:
                reader.fill()
            print(reader.buffer.split(b"\\r\\n\\r\\n", 1)[0] + b"\\r\\n\\r\\n"
                  == b"HTTP/1.1 200 \\xc7a va\\r\\nX-Tab:\\tv\\r\\nX-Spaced:   kept  \\r\\nContent-Length: 2\\r\\n\\r\\n")
            """
        let result = try await PythonClient.run(
            script, [String(proxy.port), String(record.port), String(asSent.port), proxy.caCertificate])
        #expect(result.stdoutText == "True\nTrue\nTrue\n", "\(result)")
    }

    /// RFC 9112 §3.2.2 (absolute form wins over Host), RFC 9110 §7.6.1 (hop-by-hop fields), Proxy-Authorization
    /// is for the proxy in tunnels too, one Content-Length, and HTTP/1.0 with Transfer-Encoding refused (§6.1).
    @Test func forwardedRequestsFollowTheRFCs() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let plain = try await ScriptedOrigin.start("record")
        let tls = try await ScriptedOrigin.start("record", .tls(.origin))
        let script = """
            import socket, sys, proxyclient
            proxy, plain, tls_port, ca = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
            def seen(head):
                return [line.split(b":", 1)[0].decode().lower() + "=" + line.split(b":", 1)[1].strip().decode()
                        for line in head.split(b"\\r\\n")[1:] if b":" in line]
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            sock.sendall(b"POST http://127.0.0.1:%d/x HTTP/1.1\\r\\nHost: evil.example\\r\\nConnection: X-Hop, keep-alive\\r\\n"
                         b"X-Hop: secret\\r\\nKeep-Alive: timeout=5\\r\\nTE: trailers, deflate\\r\\nProxy-Authorization: Basic eDp5\\r\\n"
                         b"Content-Length: 3\\r\\nContent-Length: 3\\r\\nX-End: 1\\r\\n\\r\\nabc" % plain)
            _, _, body, _, _ = proxyclient.Reader(sock).response()
            print(seen(body))
            tls = proxyclient.tls_tunnel(proxy, "localhost", tls_port, ca)
            tls.sendall(b"GET / HTTP/1.1\\r\\nHost: localhost\\r\\nProxy-Authorization: Basic eDp5\\r\\nUpgrade: h2c\\r\\nX-End: 1\\r\\n\\r\\n")
            _, _, body, _, _ = proxyclient.Reader(tls).response()
            print(seen(body))
            old = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            old.sendall(b"POST http://127.0.0.1:%d/x HTTP/1.0\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n3\\r\\nabc\\r\\n0\\r\\n\\r\\n" % plain)
            print(proxyclient.Reader(old).until_eof().split(b"\\r\\n", 1)[0].decode())
            """
        let result = try await PythonClient.run(
            script, [String(proxy.port), String(plain.port), String(tls.port), proxy.caCertificate])
        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result)")
        guard lines.count == 3 else { return }
        #expect(
            lines[0]
                == "['host=127.0.0.1:\(plain.port)', 'content-length=3', 'x-end=1', 'connection=keep-alive', 'te=trailers']"
        )
        #expect(lines[1] == "['host=localhost', 'x-end=1']")
        #expect(lines[2] == "HTTP/1.1 400 Bad Request")
    }

    @Test func anUnrequestedResponseDropsThatUpstreamAndNothingElse() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await ScriptedOrigin.start("unrequested")
        let script = """
            import socket, sys, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            reader = proxyclient.Reader(sock)
            for attempt in range(3):
                sock.sendall(proxyclient.request("GET", "http://127.0.0.1:%d/x" % port))
                status, _, body, _, _ = reader.response()
                print(status, body)
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText.hasPrefix("200 b'ok'\n"), "\(result)")
        let failure = await proxy.recorder.first {
            if case .upstreamFailed(_, _, _, let reason) = $0 { reason.contains("nobody asked for") } else { false }
        }
        #expect(failure != nil, "the stray response is reported")
        let after = try await Curl.run(through: proxy, [origin.url("/again")])
        #expect(after.stdoutText == "ok", "the proxy lives on: \(after)")
    }

    /// A `101` to a request that asked for no upgrade would turn the connection into a raw tunnel nothing records: the
    /// client gets a 502 instead, and the HAR says why.
    @Test func aSwitchOfProtocolsNobodyAskedForIsA502AndRecorded() async throws {
        let plain = try await ScriptedOrigin.start("switching")
        let tls = try await ScriptedOrigin.start("switching", .tls(.origin))
        let directory = try TemporaryDirectory.make("unasked-101")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let har = directory + "/run.har"
        let proxy = try await ProxyProcess.start(["--har", har])
        for origin in [plain, tls] {
            let result = try await Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                    proxy.caDirectory + "/ca.pem",
                    origin.url("/switch"), "-w", " %{http_code}",
                ], timeout: .seconds(20))
            #expect(
                result.stdoutText.hasSuffix(" 502") && !result.stdoutText.contains("RAW BYTES"),
                "\(origin.url("/switch")): \(result)")
        }
        await proxy.stop()
        let log = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any])
        let entries = ((log["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        let recorded = entries.map { entry in
            let response = entry["response"] as? [String: Any]
            return
                "\((entry["request"] as? [String: Any])?["url"] as? String ?? "?") \(response?["status"] as? Int ?? 0) "
                + "\(response?["_error"] as? String ?? "")"
        }
        let reason = "upstream answered 101 Switching Protocols to a request that asked for no upgrade"
        #expect(
            recorded.sorted() == [plain.url("/switch"), tls.url("/switch")].map { "\($0) 502 \(reason)" }.sorted(),
            "\(entries)")
        await plain.stop()
        await tls.stop()
    }
}
