import Foundation
import MITMCore
import MITMTLS
import Testing

/// `mitm-proxy audit -- COMMAND`, run as the real binary around real curl: a validating curl, `curl -k` and a pinned curl.
@Suite(.tags(.live), .skippedInFastTier) struct AuditCommandTests {
    private func audit(_ origin: OriginServer, _ extra: [String], script: String) async throws -> (
        SubprocessResult, String
    ) {
        let pki = try await TestPKI.shared()
        let directory = try TemporaryDirectory.make("audit")
        let arguments =
            [
                "audit", "--ca-dir", "\(directory)/ca", "--upstream-ca", pki.root, "--silence-window", "1",
                "--resolve", "app.origin.test:127.0.0.1", "--report", "\(directory)/audit.json", "--junit",
                "\(directory)/audit.xml",
            ]
            + extra + ["--", "/bin/sh", "-c", script]
        // The client trusts the proxy CA (from the environment) and the origin's root, so the passthrough round works too.
        let environment = ProcessInfo.processInfo.environment.merging(["TEST_ORIGIN_ROOT": pki.root]) { $1 }
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable, arguments, environment: environment, timeout: .seconds(120))
        return (result, directory)
    }

    private func curl(_ origin: OriginServer, _ options: String) -> String {
        """
        cat "$MITM_PROXY_CA" "$TEST_ORIGIN_ROOT" > "$MITM_PROXY_CA.bundle.$$"
        curl -sS --max-time 10 -o /dev/null --cacert "$MITM_PROXY_CA.bundle.$$" \(options) https://app.origin.test:\(origin.port)/hello
        """
    }

    private func report(_ directory: String) throws -> AuditResult {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(
            AuditResult.self, from: Data(contentsOf: URL(fileURLWithPath: "\(directory)/audit.json")))
    }

    @Test func aValidatingClientIsValidatesNotPinnedAndExitsZero() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let (result, directory) = try await audit(
            origin, ["--expect", "validates:app.origin.test"], script: curl(origin, ""))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("app.origin.test: VALIDATES-NOT-PINNED"), "\(result)")
        #expect(result.stderrText.contains("PASS  expect validates:app.origin.test"), "\(result)")
        let audit = try report(directory)
        let row = try #require(audit.rows.first { $0.host == "app.origin.test" })
        #expect(row.cells.filter(\.profile.isInvalid).allSatisfy { $0.verdict == .refused }, "\(row)")
        #expect(row.cells.first { $0.profile == .trusted }?.verdict == .accepted)
        #expect(row.cells.first { $0.profile == .passthrough }?.verdict == .passedThrough)
        #expect(audit.findings.isEmpty)
        let junit = try String(contentsOfFile: "\(directory)/audit.xml", encoding: .utf8)
        let expired = junit.split(separator: "\n").first {
            $0.contains("<testcase classname=\"app.origin.test\" name=\"expired\" time=\"")
        }
        #expect(expired?.hasSuffix("\"/>") == true, "\(junit)")
        #expect(junit.contains("<system-out>") && !junit.contains("time=\"0.000\">"), "\(junit)")
        #expect(junit.contains("failures=\"0\""), "\(junit)")
        // `verify` reads an audit's report: its own expectations hold, a contrary one fails.
        let verified = try await Subprocess.run(
            RepositoryLayout.builtExecutable, ["verify", "--report", "\(directory)/audit.json"], timeout: .seconds(60))
        #expect(
            verified.status == 0 && verified.stdoutText.contains("app.origin.test: VALIDATES-NOT-PINNED"), "\(verified)"
        )
        let contrary = try await Subprocess.run(
            RepositoryLayout.builtExecutable,
            ["verify", "--report", "\(directory)/audit.json", "--expect", "pinned:app.origin.test"],
            timeout: .seconds(60))
        #expect(
            contrary.status == 1 && contrary.stdoutText.contains("FAIL  expect pinned:app.origin.test"), "\(contrary)")
        await origin.stop()
    }

    @Test func anInsecureClientIsCriticalAndExitsOne() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let (result, directory) = try await audit(
            origin, ["--profiles", "trusted,expired,self-signed"], script: curl(origin, "-k"))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(result.status == 1, "\(result)")
        #expect(result.stderrText.contains("app.origin.test: CRITICAL"), "\(result)")
        #expect(result.stderrText.contains("ACCEPTED!"), "\(result)")
        let audit = try report(directory)
        #expect(audit.findings.map(\.profile) == ["expired", "self-signed"])
        #expect(audit.findings.allSatisfy { $0.severity == "critical" && $0.host == "app.origin.test" })
        let junit = try String(contentsOfFile: "\(directory)/audit.xml", encoding: .utf8)
        #expect(junit.contains("failures=\"2\""), "\(junit)")
        #expect(
            junit.contains(
                "type=\"expectation\">expected: refused (the expired certificate is invalid)&#10;seen: accepted"),
            "\(junit)")
        await origin.stop()
    }

    @Test func aPinnedClientIsPinned() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.certificate(.origin))))
        let pin = try X509Certificate.certificates(inFileBytes: bytes)[0].spkiSHA256Base64
        // The trust probe proves that this client trusts the proxy CA, so the trusted round's refusal is the pin's.
        let script = """
            curl -sS --max-time 10 -o /dev/null --cacert "$MITM_PROXY_CA" https://mitm.proxy/ || exit 5
            \(curl(origin, "--pinnedpubkey sha256//\(pin)"))
            """
        let (result, directory) = try await audit(
            origin, ["--expect", "pinned:app.origin.test", "--expect", "validates:app.origin.test"], script: script)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("app.origin.test: PINNED"), "\(result)")
        await origin.stop()
    }

    @Test func badUsageExitsTwo() async throws {
        for arguments in [
            ["audit", "--profiles", "expird", "--", "true"], ["audit", "--"],
            ["audit", "--attack", "expired", "--", "true"],
            ["audit", "--profiles", "key:/nonexistent/key.pem", "--", "true"],
            ["--expect", "pinned:a.test", "--", "true"],
        ] {
            let result = try await Subprocess.run(RepositoryLayout.builtExecutable, arguments, timeout: .seconds(90))
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(!result.stderrText.isEmpty)
        }
    }
}
