import Foundation
import Testing

/// `--capture -- COMMAND`: clients given no proxy setting at all, run in a network namespace whose TCP goes to
/// the transparent listener and whose DNS the proxy answers, are intercepted (names known from DNS), a pinning client is
/// refused, and nothing is left on the system after the run. Serialized: each test checks that no capture is left.
@Suite(
    .tags(.live), .skippedInFastTier, .serialized,
    .enabled(if: NetworkNamespace.isAvailable && NFTables.isAvailable, "--capture needs root, iproute2 and nft"))
struct CaptureTests {
    /// The proxy binary under `--capture`, around `/bin/sh -c script` (`$TEST_ROOT`: the test PKI's root).
    private func runCaptured(_ arguments: [String], script: String, timeout: Duration = .seconds(90)) async throws
        -> SubprocessResult
    {
        let pki = try await TestPKI.shared()
        let all =
            [
                "--ca-dir", TemporaryDirectory.path("capture-ca"), "--upstream-ca", pki.root, "--silence-window", "0.5",
                "--no-web",
            ]
            + ["origin.test", "pinned.test", "control.test"].flatMap { ["--resolve", "\($0):127.0.0.1"] }
            + arguments + [
                "--capture", "--", "/bin/sh", "-c",
                "export TEST_ROOT='\(pki.root)' TEST_DIR='\(pki.directory)'\n" + script,
            ]
        return try await Subprocess.run(try BuiltBinary.path(), all, timeout: timeout)
    }

    /// What `--capture` makes that is still on the system.
    private func leftCaptures() async throws -> String {
        let listed = try await Subprocess.run(
            "/bin/sh", ["-c", "ip netns list; ip -o link show; nft list tables; ls /etc/netns 2>/dev/null"],
            timeout: .seconds(20))
        return listed.stdoutText.split(separator: "\n").filter {
            $0.contains("mitm-cap-") || $0.contains("mitm_cap_") || $0.contains(": mcap")
        }
        .joined(separator: "\n")
    }

    @Test func curlWithNoProxyIsInterceptedByNameAndNothingIsLeft() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let result = try await runCaptured(
            ["--expect", "intercepted:origin.test"],
            script: """
                env | grep -i '_proxy=' && exit 9
                curl -sS --max-time 10 --noproxy '*' --cacert "$MITM_PROXY_CA" https://origin.test:\(origin.port)/hello
                """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("PASS  expect intercepted:origin.test"), "\(result)")
        #expect(
            result.stderrText.contains(
                "UDP other than DNS is refused in the namespace: QUIC (HTTP/3) clients fall back to TCP"), "\(result)")
        #expect(result.stderrText.contains("by curl (pid "), "the connection is the command's curl: \(result)")
        #expect(try await leftCaptures() == "")
        await origin.stop()
    }

    @Test func aPinningCurlIsRefusedBesideAControlHost() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let result = try await runCaptured(
            ["--expect", "refused:pinned.test", "--expect", "intercepted:control.test"],
            script: """
                PIN=$(openssl x509 -in "$TEST_DIR/origin.pem" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
                curl -sS --max-time 10 --noproxy '*' --cacert "$MITM_PROXY_CA" -o /dev/null https://control.test:\(origin.port)/hello || exit 7
                curl -sS --max-time 10 --noproxy '*' --cacert "$MITM_PROXY_CA" --pinnedpubkey "sha256//$PIN" https://pinned.test:\(origin.port)/hello && exit 8
                exit 0
                """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("PASS  expect refused:pinned.test"), "\(result)")
        #expect(result.stderrText.contains("PASS  expect intercepted:control.test"), "\(result)")
        #expect(try await leftCaptures() == "")
        await origin.stop()
    }

    @Test func pythonWithTheProxyVariablesRemovedIsIntercepted() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let result = try await runCaptured(
            ["--expect", "intercepted:origin.test"],
            script: """
                env -u HTTPS_PROXY -u https_proxy -u HTTP_PROXY -u http_proxy python3 -c '
                import os, ssl, urllib.request
                context = ssl.create_default_context(cafile=os.environ["MITM_PROXY_CA"])
                print(urllib.request.urlopen("https://origin.test:\(origin.port)/hello", context=context, timeout=10).status)'
                """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText.contains("200"), "\(result)")
        #expect(result.stderrText.contains("PASS  expect intercepted:origin.test"), "\(result)")
        #expect(try await leftCaptures() == "")
        await origin.stop()
    }

    @Test(.enabled(if: (try? Subprocess.executablePath("java")) != nil, "needs a JDK (java on PATH)"))
    func javasHttpClientWithATrustStoreFromTheCAIsIntercepted() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let source = TemporaryDirectory.path("capture-java") + "/Fetch.java"
        try FileManager.default.createDirectory(
            atPath: (source as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try """
        import java.net.URI;
        import java.net.http.*;
        public class Fetch {
            public static void main(String[] args) throws Exception {
                HttpResponse<String> response = HttpClient.newHttpClient()
                    .send(HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.ofString());
                System.out.println(response.statusCode());
            }
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let store = TemporaryDirectory.path("capture-java-store") + ".p12"
        let result = try await runCaptured(
            ["--expect", "intercepted:origin.test"],
            script: """
                keytool -importcert -noprompt -alias mitm-proxy -file "$MITM_PROXY_CA" -keystore '\(store)' -storetype PKCS12 -storepass changeit >/dev/null || exit 6
                java -Djavax.net.ssl.trustStore='\(store)' -Djavax.net.ssl.trustStorePassword=changeit '\(source)' https://origin.test:\(origin.port)/hello
                """, timeout: .seconds(180))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText.contains("200"), "\(result)")
        #expect(result.stderrText.contains("PASS  expect intercepted:origin.test"), "\(result)")
        #expect(try await leftCaptures() == "")
        await origin.stop()
    }

    @Test func leftoversOfACrashedRunAreRemovedAndNamed() async throws {
        var dead: Int32 = 4_194_000
        while FileManager.default.fileExists(atPath: "/proc/\(dead)") { dead += 1 }
        let made = try await Subprocess.run(
            "/bin/sh",
            [
                "-c",
                """
                ip netns add mitm-cap-\(dead) && nft add table inet mitm_cap_\(dead) && mkdir -p /etc/netns/mitm-cap-\(dead)
                """,
            ], timeout: .seconds(20))
        #expect(made.succeeded, "\(made)")
        let result = try await runCaptured([], script: "true")
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderrText.contains(
                "removed the leftovers of a capture that did not end cleanly: network namespace mitm-cap-\(dead)"),
            "\(result)")
        #expect(try await leftCaptures() == "")
    }

    @Test func withoutPrivilegesItSaysWhatIsMissingAndExits2() async throws {
        let result = try await Subprocess.run(
            "/usr/sbin/runuser",
            [
                "-u", "nobody", "--", try BuiltBinary.path(), "--ca-dir",
                "/tmp/mitm-capture-nobody-\(getpid())", "--capture", "--", "true",
            ],
            timeout: .seconds(60))
        #expect(result.status == 2, "\(result)")
        #expect(
            result.stderrText.contains("--capture needs root (or the CAP_NET_ADMIN and CAP_SYS_ADMIN capabilities)"),
            "\(result)")
        #expect(result.stderrText.contains("run the client through the explicit proxy"), "\(result)")
    }

    /// SIGTERM or Ctrl-C to a capturing proxy: the command ends, and the namespace, its link, its table and its resolv.conf go.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalRemovesTheCapture(signal: Int32) async throws {
        let proxy = try RunningProxyProcess([
            "--ca-dir", TemporaryDirectory.path("capture-signal-ca"), "--no-web", "--capture", "--",
            "sleep", "60",
        ])
        let pid = proxy.process.processIdentifier
        let made = await Poll.until(timeout: .seconds(20)) {
            FileManager.default.fileExists(atPath: "/run/netns/mitm-cap-\(pid)")
        }
        #expect(made)
        _ = proxy.stop(signal: signal)
        let listed = try await Subprocess.run(
            "/bin/sh", ["-c", "ip netns list; ip -o link show; nft list tables; ls /etc/netns 2>/dev/null"],
            timeout: .seconds(20))
        #expect(
            !listed.stdoutText.contains("mitm-cap-\(pid)") && !listed.stdoutText.contains("mitm_cap_\(pid)")
                && !listed.stdoutText.contains("mcap\(pid)h"), "\(listed)")
    }
}
