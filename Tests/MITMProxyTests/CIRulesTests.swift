import Foundation
import MITMCore
import Testing

/// The rules that keep a CI run honest, run as the real binary
/// around real curl clients.
@Suite(.tags(.live), .skippedInFastTier) struct CIRulesTests {
    private func runProxy(_ arguments: [String], script: String) async throws -> SubprocessResult {
        let pki = try await TestPKI.shared()
        let all =
            ["--ca-dir", TemporaryDirectory.path("ci-rules-ca"), "--upstream-ca", pki.root, "--silence-window", "0.5"]
            + ["api.origin.test", "www.origin.test", "pinned.test", "control.test"].flatMap {
                ["--resolve", "\($0):127.0.0.1"]
            }
            + arguments + ["--", "/bin/sh", "-c", script]
        return try await Subprocess.run(try BuiltBinary.path(), all, timeout: .seconds(60))
    }

    // Observation 1: a client that does not trust the proxy's CA at all refuses everything; that proves nothing.
    @Test func aRefusalFromAClientThatNeverAcceptedTheCAFails() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let script =
            "curl -sS --max-time 10 -o /dev/null --cacert \(pki.root) https://pinned.test:\(origin.port)/hello; exit 0"
        let result = try await runProxy(["--expect", "refused:pinned.test"], script: script)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText.contains("pinned.test  refused       1 refused (alert unknown_ca 1)"), "\(result)")
        #expect(
            result.stderrText.contains("FAIL  expect refused:pinned.test: nothing proven for this client: curl (pid "),
            "\(result)")
        #expect(
            result.stderrText.contains(
                "refused pinned.test (alert unknown_ca) without ever accepting the proxy's CA; "
                    + "no client accepted the proxy's CA in this run. Is the CA installed and trusted by this client?"),
            "\(result)")

        let waived = try await runProxy(
            ["--expect", "refused:pinned.test", "--allow-unproven-refusals"], script: script)
        #expect(waived.status == 0, "\(waived)")
        #expect(waived.stderrText.contains("UNPROVEN"), "\(waived)")
        await origin.stop()
    }

    // The trust probe is proof enough for a client whose app has no control host.
    @Test func loadingTheTrustProbeProvesTheClientTrustsTheCA() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let pin = try await originPin()
        let script = """
            curl -sS --max-time 10 https://mitm.proxy/trusted || exit 7
            curl -sS --max-time 10 -o /dev/null --pinnedpubkey 'sha256//\(pin)' https://pinned.test:\(origin.port)/hello
            exit 0
            """
        let result = try await runProxy(["--expect", "refused:pinned.test"], script: script)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText.contains("this client trusts the mitm-proxy CA"), "\(result)")
        #expect(result.stderrText.contains("trust probe: client curl (pid "), "\(result)")
        #expect(result.stderrText.contains(") loaded https://mitm.proxy/"), "\(result)")
        #expect(
            !result.stderrText.contains("mitm.proxy  "), "the proxy's own name is not a row of the table: \(result)")
        await origin.stop()
    }

    // Observation 2: the client command's failure is never lost.
    @Test func aFailingClientCommandMakesTheProxyExitThree() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let passing = "curl -sS --max-time 10 -o /dev/null https://control.test:\(origin.port)/hello || exit 9; exit 5"
        let result = try await runProxy(["--expect", "intercepted:control.test"], script: passing)
        #expect(result.status == 3, "\(result)")
        #expect(result.stderrText.contains("PASS  expect intercepted:control.test"), "\(result)")
        #expect(result.stderrText.contains("FAIL  client command: /bin/sh -c"), "\(result)")
        #expect(result.stderrText.contains("exited with status 5"), "\(result)")

        let bare = try await Subprocess.run(
            try BuiltBinary.path(), ["--ca-dir", TemporaryDirectory.path("ci-rules-ca"), "--", "false"],
            timeout: .seconds(30))
        #expect(bare.status == 3, "\(bare)")
        await origin.stop()
    }

    // Observation 6: "everything under bank.test is intercepted except the pinned API" can be said.
    @Test func aPinnedHostCanBeCarvedOutOfAWildcard() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let pin = try await originPin()
        let script = """
            curl -sS --max-time 10 -o /dev/null https://www.origin.test:\(origin.port)/hello || exit 7
            curl -sS --max-time 10 -o /dev/null --pinnedpubkey 'sha256//\(pin)' https://api.origin.test:\(origin.port)/hello
            exit 0
            """
        let result = try await runProxy(
            ["--expect", "refused:api.origin.test", "--expect", "intercepted:*.origin.test"], script: script)
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderrText.contains("PASS  expect intercepted:*.origin.test: www.origin.test: intercepted"),
            "\(result)")
        #expect(result.stderrText.contains("PASS  expect refused:api.origin.test"), "\(result)")
        await origin.stop()
    }

    private func originPin() async throws -> String {
        let pki = try await TestPKI.shared()
        let result = try await Subprocess.run(
            "/bin/sh",
            [
                "-c",
                """
                openssl x509 -in \(pki.certificate(.origin)) -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64
                """,
            ])
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
