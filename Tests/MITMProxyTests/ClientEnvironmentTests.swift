// Only the library product's module: what a test author's package imports (verdicts and expectations included).
import Foundation
import MITMProxy
import Testing

/// `ProxyServer.clientEnvironment`: what a client needs to go through the proxy, the same as the CLI's client command.
@Suite(.tags(.live), .skippedInFastTier) struct ClientEnvironmentTests {
    @Test func aClientGivenOnlyTheEnvironmentGoesThroughTheProxyAndTrustsItsCA() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let proxy = try ProxyServer.forTesting { configuration in
            configuration.upstreamCAFiles = [pki.root]
            configuration.resolveOverrides = ["control.test": "127.0.0.1", "pinned.test": "127.0.0.1"]
            configuration.silenceWindow = .seconds(1)
        }
        proxy.start()
        var parent = ProcessInfo.processInfo.environment
        parent["NO_PROXY"] = "*"  // would send curl around the proxy, where control.test does not resolve
        let environment = proxy.clientEnvironment.applied(to: parent)
        #expect(environment["NO_PROXY"] == nil)

        let plain = try await Subprocess.run(
            "/usr/bin/curl", ["-sS", "--max-time", "10", "https://control.test:\(origin.port)/hello"],
            environment: environment)
        #expect(plain.succeeded, "\(plain)")
        #expect(plain.stdoutText == "hello from origin")
        let pin = try await Subprocess.run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in '\(pki.certificate(.origin))' -pubkey -noout"
                    + " | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            ])
        let pinned = try await Subprocess.run(
            "/usr/bin/curl",
            [
                "-sS", "--max-time", "10", "--pinnedpubkey",
                "sha256//\(pin.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))",
                "https://pinned.test:\(origin.port)/hello",
            ], environment: environment)
        #expect(pinned.status == 90, "curl must fail its pin check: \(pinned)")

        #expect(await proxy.waitForVerdict(host: "control.test")?.verdict == .intercepted)
        #expect(await proxy.waitForVerdict(host: "pinned.test")?.verdict == .refused)
        let expectations = try ["refused:pinned.test", "intercepted:control.test"].map(Expectation.init(parsing:))
        let results = proxy.evaluate(expectations)
        #expect(results.map(\.met) == [true, true], "\(results)")
        proxy.stop()
        await origin.stop()
    }

    @Test func theCLIGivesItsClientCommandTheSameEnvironment() async throws {
        let directory =
            FileManager.default.temporaryDirectory.path + "/mitm-proxy-client-environment-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var parent = ProcessInfo.processInfo.environment
        parent["NO_PROXY"] = "localhost"
        parent["no_proxy"] = "localhost"
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable, ["--ca-dir", directory, "--", "/usr/bin/env"],
            environment: parent, timeout: .seconds(60))
        #expect(result.succeeded, "\(result)")
        var seen: [String: String] = [:]
        for line in result.stdoutText.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            seen[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        let port = try #require(seen["MITM_PROXY_PORT"].flatMap { Int($0) }, "\(result)")
        let caPath = try #require(seen["MITM_PROXY_CA"])
        #expect(caPath.hasPrefix(directory + "/") && FileManager.default.fileExists(atPath: caPath))
        let bundle = try #require(seen["SSL_CERT_FILE"])
        let expected = ClientEnvironment(proxyPort: port, caCertificatePath: caPath, trustBundlePath: bundle)
        // Issue 34, item 11: the variables that replace a trust store hold the system's roots too; MITM_PROXY_CA the CA alone.
        let ca = try String(contentsOfFile: caPath, encoding: .utf8)
        let bundleText = try String(contentsOfFile: bundle, encoding: .utf8)
        #expect(bundle != caPath && bundleText.hasSuffix(ca), "\(bundle)")
        #expect(
            bundleText.components(separatedBy: "BEGIN CERTIFICATE").count > 10, "the system's roots are in the bundle")
        #expect(ca.components(separatedBy: "BEGIN CERTIFICATE").count == 2)
        #expect(expected.proxyURL == "http://127.0.0.1:\(port)")
        for (name, value) in expected.variables {
            #expect(seen[name] == value, "\(name)")
        }
        for name in ClientEnvironment.removedVariables {
            #expect(seen[name] == nil, "\(name)")
        }
    }

    @Test func theProxyURLCarriesCredentialsAndBracketsAnIPv6Address() throws {
        let credentials = try ProxyCredentials(parsing: "tester:p@ss:word")
        let environment = ClientEnvironment(
            proxyHost: "::1", proxyPort: 8080, caCertificatePath: "/ca/ca.pem",
            credentials: credentials)
        #expect(environment.proxyURL == "http://tester:p%40ss%3Aword@[::1]:8080")
        let applied = environment.applied(to: ["PATH": "/bin", "no_proxy": "*", "HTTPS_PROXY": "http://elsewhere:3128"])
        #expect(applied["PATH"] == "/bin")
        #expect(applied["no_proxy"] == nil)
        #expect(applied["HTTPS_PROXY"] == environment.proxyURL)
        #expect(applied["https_proxy"] == environment.proxyURL)
        #expect(applied["SSL_CERT_FILE"] == "/ca/ca.pem", "without a bundle, the CA alone")
        #expect(applied["MITM_PROXY_PORT"] == "8080")
    }
}
