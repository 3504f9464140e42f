import Foundation
import Testing

/// `--har`: a HAR 1.2 file, valid against the schema, with every exchange and the refused TLS connections.
@Suite(.tags(.live), .skippedInFastTier) struct HARRecordingTests {
    struct Entry: Decodable {
        let method: String
        let url: String
        let status: Int
        let size: Int
        let textLength: Int
        let encoding: String?
        let truncated: Bool
        let connection: String?
        let postLength: Int
        let trailers: [[String: String]]?
        /// Why the exchange failed (`_error`), if it did.
        let error: String?
    }

    struct Summary: Decodable {
        let entries: [Entry]
        let tlsErrors: [[String: AnyDecodable]]
    }

    struct AnyDecodable: Decodable {
        let text: String?
        init(from decoder: Decoder) throws {
            text = try? decoder.singleValueContainer().decode(String.self)
        }
    }

    /// Validates `path` against the HAR 1.2 schema and returns its summary.
    static func validated(_ path: String) async throws -> Summary {
        let validator = RepositoryLayout.root + "/Tests/MITMProxyTests/Fixtures/validate_har.py"
        let result = try await Subprocess.run("/usr/bin/env", ["python3", validator, path], timeout: .seconds(30))
        try #require(result.succeeded, "HAR does not validate: \(result.stderrText)")
        return try JSONDecoder().decode(Summary.self, from: Data(result.stdout))
    }

    @Test func aMixedSessionIsRecordedAndValid() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let plain = try await OriginServer.start(.plainHTTP)
        let base = FileManager.default.temporaryDirectory.path + "/mitm-proxy-har-\(UUID().uuidString)"
        let port = origin.port
        let upgrade = """
            import socket, ssl, os
            s = socket.create_connection(("127.0.0.1", int(os.environ["MITM_PROXY_PORT"])))
            s.sendall(b"CONNECT origin.test:\(port) HTTP/1.1\\r\\nHost: origin.test\\r\\n\\r\\n")
            assert s.recv(1024).startswith(b"HTTP/1.1 200")
            t = ssl.create_default_context(cafile=os.environ["MITM_PROXY_CA"]).wrap_socket(s, server_hostname="origin.test")
            t.sendall(b"GET /ws HTTP/1.1\\r\\nHost: origin.test\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n")
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                head += t.recv(1024)
            assert head.startswith(b"HTTP/1.1 101"), head
            t.sendall(b"raw bytes after 101")
            echoed = b""
            while len(echoed) < 19:
                echoed += t.recv(1024)
            assert echoed == b"raw bytes after 101", echoed
            t.close()
            """
        let script = """
            set -e
            O=https://origin.test:\(port)
            curl -sS --max-time 20 -o /dev/null -o /dev/null $O/hello $O/chunked/5000
            curl -sS --max-time 20 -o /dev/null $O/bytes/1000
            curl -sS --max-time 20 -o /dev/null $O/bytes/3000000
            curl -sS --max-time 20 -o /dev/null $O/status/204
            curl -sS --max-time 20 -o /dev/null --data-binary 'a=1&b=2' -H 'Content-Type: application/x-www-form-urlencoded' $O/digest
            curl -sS --max-time 20 -o /dev/null http://127.0.0.1:\(plain.port)/hello
            python3 -c '\(upgrade)'
            curl -sS --max-time 20 -o /dev/null --cacert \(pki.root) $O/hello || true
            """
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable,
            [
                "--ca-dir", base, "--upstream-ca", pki.root, "--resolve", "origin.test:127.0.0.1", "--silence-window",
                "1",
                "--har", base + ".har", "--body-limit", "1048576", "--", "/bin/sh", "-c", script,
            ], timeout: .seconds(90))
        #expect(result.status == 0, "\(result)")
        let har = try await Self.validated(base + ".har")
        let byURL = Dictionary(har.entries.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
        let hello = try #require(byURL["https://origin.test:\(port)/hello"])
        let chunked = try #require(byURL["https://origin.test:\(port)/chunked/5000"])
        #expect(hello.connection == chunked.connection, "keep-alive: both requests on one connection")
        #expect(chunked.size == 5000)
        #expect(chunked.trailers?.first?["name"]?.lowercased() == "x-body-sha256")
        let binary = try #require(byURL["https://origin.test:\(port)/bytes/1000"])
        #expect(binary.encoding == "base64")
        #expect(binary.textLength == 1336, "1000 bytes as base64")
        let large = try #require(byURL["https://origin.test:\(port)/bytes/3000000"])
        #expect(large.size == 3_000_000)
        #expect(large.truncated)
        #expect(large.textLength == 1_398_104, "1 MiB kept, base64")
        #expect(byURL["https://origin.test:\(port)/status/204"]?.size == 0)
        #expect(byURL["https://origin.test:\(port)/digest"]?.postLength == 7)
        #expect(byURL["http://127.0.0.1:\(plain.port)/hello"]?.status == 200)
        #expect(byURL["https://origin.test:\(port)/ws"]?.status == 101)
        #expect(har.tlsErrors.contains { $0["verdict"]?.text == "refused" && $0["alert"]?.text == "unknown_ca" })
        let summary = try await Subprocess.run(RepositoryLayout.builtExecutable, ["har", "summary", base + ".har"])
        #expect(summary.stdoutText.contains("origin.test"))
        #expect(summary.stdoutText.contains("refused/alert unknown_ca×1"))
        await origin.stop()
        await plain.stop()
    }

    @Test func theHARIsCompleteAfterSIGINTMidRun() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let base = FileManager.default.temporaryDirectory.path + "/mitm-proxy-har-int-\(UUID().uuidString)"
        let proxy = try RunningProxyProcess([
            "--port", "0", "--ca-dir", base, "--upstream-ca", pki.root, "--resolve", "origin.test:127.0.0.1",
            "--har", base + ".har", "--redact",
        ])
        for path in ["/hello", "/bytes/20000"] {
            let curl = try await Subprocess.run(
                "/usr/bin/curl",
                [
                    "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                    base + "/ca.pem",
                    "-H", "Authorization: Bearer secret-token", "https://origin.test:\(origin.port)\(path)", "-o",
                    "/dev/null",
                ])
            #expect(curl.succeeded, "\(curl)")
        }
        #expect(proxy.stop(signal: SIGINT) == 0)
        let har = try await Self.validated(base + ".har")
        #expect(har.entries.map(\.status) == [200, 200])
        let text = try String(contentsOfFile: base + ".har", encoding: .utf8)
        #expect(!text.contains("secret-token"), "--redact masks Authorization")
        #expect(text.contains("REDACTED"))
        await origin.stop()
    }

    @Test func anUnwritableHARPathFailsAtStartNamingTheFile() async throws {
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable,
            [
                "--port", "0", "--ca-dir",
                FileManager.default.temporaryDirectory.path + "/mitm-proxy-har-bad-\(UUID().uuidString)",
                "--har", "/nonexistent-directory/x.har", "--", "/bin/true",
            ])
        #expect(result.status == 2)
        #expect(result.stderrText.contains("--har /nonexistent-directory/x.har: cannot open for writing"))
    }
}
