import Foundation
import Testing

/// Client stacks beyond curl and python that trust the proxy CA succeed through it, and fail without it:
/// Java 17 (HttpsURLConnection and java.net.http.HttpClient, trust store made by keytool), Node 20
/// (`https.request` over a CONNECT tunnel from the `http` module, `NODE_EXTRA_CA_CERTS`) and Go's net/http
/// (an explicit proxy and a root pool holding only the proxy CA).
@Suite(.tags(.live), .skippedInFastTier, .serialized) struct ClientStackTests {
    /// A PKCS#12 trust store holding the proxy CA, made by keytool.
    private func trustStore(for proxy: ProxyHarness) async throws -> String {
        let path = proxy.caDirectory + "/truststore.p12"
        let result = try await Subprocess.run(
            "keytool",
            [
                "-importcert", "-noprompt", "-alias", "mitm-proxy", "-file", proxy.caCertificate,
                "-keystore", path, "-storetype", "PKCS12", "-storepass", "changeit",
            ])
        #expect(result.succeeded, "\(result)")
        return path
    }

    private func java(through proxy: ProxyHarness, trustStore: String?, url: String) async throws -> SubprocessResult {
        var options = [
            "-Dhttps.proxyHost=127.0.0.1", "-Dhttps.proxyPort=\(proxy.port)", "-Dhttp.nonProxyHosts=",
            "-Xshare:auto", "-XX:TieredStopAtLevel=1",
        ]
        if let trustStore {
            options += ["-Djavax.net.ssl.trustStore=\(trustStore)", "-Djavax.net.ssl.trustStorePassword=changeit"]
        }
        return try await Subprocess.run(
            "java", options + [RepositoryLayout.fixtures + "/ProxyClient.java", url], timeout: .seconds(90))
    }

    @Test func javaClientsTrustingTheProxyCASucceed() async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let store = try await trustStore(for: proxy)
        let hello = try await java(
            through: proxy, trustStore: store, url: origin.url("/hello", hostname: "origin.test"))
        #expect(
            hello.stdoutText == """
                HttpsURLConnection 200 17 hello_from_origin
                HttpClient 200 17 hello_from_origin HTTP_1_1

                """, "\(hello)")
        // HttpsURLConnection offers no ALPN; HttpClient offers h2 and http/1.1 and gets http/1.1.
        let alpns = proxy.events.compactMap {
            if case .intercepted(_, "origin.test", _, _, let alpn) = $0 { alpn ?? "none" } else { nil }
        }
        #expect(alpns.sorted() == ["http/1.1", "none"], "\(proxy.events)")
    }

    @Test func javaClientsWithoutTheProxyCAFail() async throws {
        let proxy = try await ProxyHarness.start { $0.resolveOverrides = ["origin.test": "127.0.0.1"] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let result = try await java(through: proxy, trustStore: nil, url: origin.url("/hello", hostname: "origin.test"))
        #expect(
            result.stdoutText
                == "HttpsURLConnection failed SSLHandshakeException\nHttpClient failed SSLHandshakeException\n",
            "\(result)")
        #expect(
            await Poll.until {
                proxy.events.filter { if case .clientTLSFailed = $0 { true } else { false } }.count == 2
            })
    }

    private static let nodeClient = """
        const http = require("http"), https = require("https"), tls = require("tls");
        const [proxyPort, host, port, path] = process.argv.slice(1);
        const connect = http.request({ host: "127.0.0.1", port: proxyPort, method: "CONNECT", path: `${host}:${port}` });
        connect.on("connect", (answer, socket) => {
          const request = https.request({
            host, port, path,
            createConnection: () => tls.connect({ socket, servername: host, ALPNProtocols: ["h2", "http/1.1"] }),
          }, (response) => {
            const chunks = [];
            response.on("data", (chunk) => chunks.push(chunk));
            response.on("end", () => {
              const body = Buffer.concat(chunks);
              console.log(answer.statusCode, response.statusCode, response.socket.alpnProtocol, body.length,
                          body.length <= 64 ? body.toString() : "binary");
              socket.destroy();
            });
          });
          request.on("error", (error) => { console.log("failed", error.code); socket.destroy(); });
          request.end();
        });
        connect.on("error", (error) => console.log("proxy failed", error.code));
        connect.end();
        """

    private func node(through proxy: ProxyHarness, trusting: Bool, host: String, port: UInt16, path: String)
        async throws -> SubprocessResult
    {
        var environment = ProcessInfo.processInfo.environment
        if trusting {
            environment["NODE_EXTRA_CA_CERTS"] = proxy.caCertificate
        } else {
            environment["NODE_EXTRA_CA_CERTS"] = nil
        }
        return try await Subprocess.run(
            "node", ["-e", Self.nodeClient, String(proxy.port), host, String(port), path],
            environment: environment, timeout: .seconds(30))
    }

    @Test func nodeTrustingTheProxyCASucceeds() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let hello = try await node(through: proxy, trusting: true, host: "localhost", port: origin.port, path: "/hello")
        #expect(hello.stdoutText == "200 200 http/1.1 17 hello from origin\n", "\(hello)")
        let chunked = try await node(
            through: proxy, trusting: true, host: "localhost", port: origin.port, path: "/chunked/300000")
        #expect(chunked.stdoutText == "200 200 http/1.1 300000 binary\n", "\(chunked)")
    }

    @Test func nodeWithoutTheProxyCAFails() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let result = try await node(
            through: proxy, trusting: false, host: "localhost", port: origin.port, path: "/hello")
        #expect(result.stdoutText.hasPrefix("failed "), "\(result)")
        #expect(await proxy.recorder.first { if case .clientTLSFailed = $0 { true } else { false } } != nil)
    }

    private func go(through proxy: ProxyHarness, caFile: String, url: String) async throws -> SubprocessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["GO111MODULE"] = "off"
        return try await Subprocess.run(
            "go", ["run", RepositoryLayout.fixtures + "/proxy_client.go", proxy.url, caFile, url],
            environment: environment, timeout: .seconds(120))
    }

    @Test func goTrustingOnlyTheProxyCASucceedsAndWithoutItFails() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let hello = try await go(
            through: proxy, caFile: proxy.caCertificate, url: origin.url("/hello", hostname: "localhost"))
        // Go offers h2 and http/1.1; the proxy selects http/1.1.
        #expect(hello.stdoutText == "200 HTTP/1.1 17 hello from origin\n", "\(hello)")
        let untrusting = try await go(through: proxy, caFile: "-", url: origin.url("/hello", hostname: "localhost"))
        #expect(untrusting.stdoutText.contains("x509: certificate signed by unknown authority"), "\(untrusting)")
        let refusal = await proxy.recorder.first { if case .clientTLSFailed = $0 { true } else { false } }
        #expect(refusal?.failureReason?.contains("bad_certificate") == true, "\(proxy.events)")
    }
}
