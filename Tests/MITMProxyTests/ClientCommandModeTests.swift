import Foundation
import MITMCore
import MITMTLS
import Testing

/// `mitm-proxy --expect ... -- COMMAND`: the CI mode, run as the real binary.
@Suite(.tags(.live), .skippedInFastTier) struct ClientCommandModeTests {
    private func run(_ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(RepositoryLayout.builtExecutable, arguments, timeout: .seconds(60))
    }

    private func originPin(_ pki: TestPKI) throws -> String {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.certificate(.origin))))
        return try X509Certificate.certificates(inFileBytes: bytes)[0].spkiSHA256Base64
    }

    private func clientScript(origin: OriginServer, pin: String) -> String {
        // curl finds the proxy and the CA in the environment the proxy sets.
        """
        curl -sS --max-time 10 -o /dev/null https://control.test:\(origin.port)/hello || exit 3
        curl -sS --max-time 10 -o /dev/null --pinnedpubkey 'sha256//\(pin)' https://pinned.test:\(origin.port)/hello && exit 4
        exit 0
        """
    }

    @Test func exitsZeroWhenThePinnedHostIsRefusedAndTheControlHostIntercepted() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let directory = FileManager.default.temporaryDirectory.path + "/mitm-proxy-cli-\(UUID().uuidString)"
        let reportPath = directory + "-report.json"
        let result = try await run([
            "--ca-dir", directory, "--upstream-ca", pki.root, "--silence-window", "1",
            "--resolve", "control.test:127.0.0.1", "--resolve", "pinned.test:127.0.0.1",
            "--expect", "refused:pinned.test", "--expect", "intercepted:control.test", "--report", reportPath,
            "--", "/bin/sh", "-c", clientScript(origin: origin, pin: try originPin(pki)),
        ])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("PASS  expect refused:pinned.test"))
        let report = try VerdictReport.decode(try Data(contentsOf: URL(fileURLWithPath: reportPath)))
        #expect(report.final)
        #expect(report.result == "pass")
        #expect(Set(report.hosts.map(\.host)) == ["control.test", "pinned.test"])
        let verify = try await run(["verify", "--report", reportPath, "--expect", "refused:pinned.test"])
        #expect(verify.status == 0, "\(verify)")
        let wrong = try await run(["verify", "--report", reportPath, "--expect", "intercepted:pinned.test"])
        #expect(wrong.status == 1, "\(wrong)")
        // The evidence line names the expectation verify checked, not the one the report was written with.
        #expect(wrong.stdoutText.contains("expectation --expect intercepted:pinned.test"), "\(wrong)")
        #expect(!wrong.stdoutText.contains("expectation --expect refused:pinned.test"), "\(wrong)")
        let ownExpectations = try await run(["verify", "--report", reportPath])
        #expect(ownExpectations.status == 0, "verify re-checks the report's own expectations: \(ownExpectations)")
        #expect(ownExpectations.stdoutText.contains("PASS  expect intercepted:control.test"), "\(ownExpectations)")
        await origin.stop()
    }

    @Test func exitsOneWhenAnExpectationFailsOrAHostIsUnseen() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let directory = FileManager.default.temporaryDirectory.path + "/mitm-proxy-cli-\(UUID().uuidString)"
        let result = try await run([
            "--ca-dir", directory, "--upstream-ca", pki.root, "--silence-window", "1",
            "--resolve", "control.test:127.0.0.1",
            "--expect", "refused:control.test", "--expect", "refused:never-contacted.test",
            "--", "/usr/bin/curl", "-sS", "--max-time", "10", "-o", "/dev/null",
            "https://control.test:\(origin.port)/hello",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderrText.contains("FAIL  expect refused:control.test: control.test was intercepted, not refused"))
        #expect(result.stderrText.contains("never-contacted.test  unseen"))
        await origin.stop()
    }

    /// The command gets stdin, stdout and stderr and no other descriptor of the proxy, starts with no signal blocked and
    /// SIGPIPE at its default (a `curl | head` behaves as in a shell), and one a signal ends fails the run, saying so.
    @Test func theCommandStartsCleanAndItsEndBySignalIsReported() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/mitm-proxy-cli-\(UUID().uuidString)"
        let script = """
            ls /proc/self/fd | sort -n | tr '\\n' ' '; echo
            grep -E '^(SigIgn|SigBlk)' /proc/self/status
            kill -TERM $$
            """
        let result = try await run(["--ca-dir", directory, "--", "/bin/sh", "-c", script])
        #expect(result.status == 3, "\(result)")
        let lines = result.stdoutText.split(separator: "\n")
        // ls's own descriptors: the three it was given and the directory it reads.
        #expect(lines.first == "0 1 2 3 ", "\(result)")
        let blocked = lines.first { $0.hasPrefix("SigBlk:") }.flatMap {
            UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        let ignored = lines.first { $0.hasPrefix("SigIgn:") }.flatMap {
            UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        #expect(blocked == 0, "\(result)")
        #expect(ignored.map { $0 & (1 << (UInt64(SIGPIPE) - 1)) == 0 } == true, "SIGPIPE is not ignored: \(result)")
        #expect(result.stderrText.contains("was killed by signal 15"), "\(result)")
        #expect(result.stderrText.contains("mitm-proxy exits 3: the client command failed"), "\(result)")
    }

    @Test func exitsTwoOnUsageAndSetupErrors() async throws {
        let badFlag = try await run(["--expect", "pinned:a.test", "--", "/bin/true"])
        #expect(badFlag.status == 2)
        #expect(badFlag.stderrText.contains("only `mitm-proxy audit` can decide pinned:"))
        let missingCommand = try await run([
            "--port", "0", "--ca-dir",
            FileManager.default.temporaryDirectory.path + "/mitm-proxy-cli-\(UUID().uuidString)",
            "--", "/nonexistent/client",
        ])
        #expect(missingCommand.status == 2)
        #expect(missingCommand.stderrText.contains("/nonexistent/client is not an executable file"))
    }
}
