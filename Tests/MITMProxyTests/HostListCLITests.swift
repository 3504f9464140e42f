import Foundation
import Testing

/// `--ignore-hosts` and `--intercept-hosts` on the command line: `@FILE` lists, and the mistakes that would make a
/// run fail for nothing (a pattern in both lists, an expected host that is never intercepted) are errors up front.
@Suite(.tags(.live), .skippedInFastTier) struct HostListCLITests {
    private func run(_ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(
            try BuiltBinary.path(), arguments + ["--ca-dir", TemporaryDirectory.path("unused-ca")],
            timeout: .seconds(90))
    }

    private func file(_ text: String) throws -> String {
        let path = TemporaryDirectory.path("hosts") + ".txt"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func mistakesInTheListsExitWith2AndSayWhy() async throws {
        let badLine = try file("# OS hosts\n*.apple.com\nhttps://gs.apple.com/\n")
        let empty = try file("# nothing yet\n\n")
        defer { for path in [badLine, empty] { try? FileManager.default.removeItem(atPath: path) } }
        let cases: [([String], String)] = [
            (
                ["--ignore-hosts", "@/nonexistent/hosts.txt"],
                "cannot read --ignore-hosts file /nonexistent/hosts.txt: No such file or directory"
            ),
            (
                ["--ignore-hosts", "@" + badLine],
                "--ignore-hosts @\(badLine) line 3: host pattern \"https://gs.apple.com/\" contains \"/\", which cannot appear in a host name"
            ),
            (["--intercept-hosts", "@" + empty], "--intercept-hosts @\(empty): it holds no host pattern"),
            (
                ["--intercept-hosts", "api.test:443"],
                "--intercept-hosts api.test:443: host pattern \"api.test:443\" has a port"
            ),
            (
                ["--ignore-hosts", "api.test", "--intercept-hosts", "API.test"],
                "api.test is given to both --ignore-hosts and --intercept-hosts"
            ),
            (
                ["--ignore-hosts", "*.bank.test", "--expect", "refused:api.bank.test"],
                "--expect refused:api.bank.test: api.bank.test is passed through untouched by --ignore-hosts, so it can never get a verdict; "
                    + "drop *.bank.test from --ignore-hosts or the expectation"
            ),
            (
                ["--intercept-hosts", "control.test", "--expect", "refused:pinned.test"],
                "--expect refused:pinned.test: pinned.test is passed through untouched by --intercept-hosts, so it can never get a verdict; "
                    + "add --intercept-hosts pinned.test or drop the expectation"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await run(arguments)
            #expect(result.status == 2 && !result.terminatedBySignal, "\(arguments): \(result)")
            #expect(result.stderrText.contains(message), "\(arguments): \(result)")
        }
    }

    /// A list from a file (comments and all) drives the running binary: the unlisted host is logged as PASSTHROUGH and gets
    /// no verdict, and a wildcard expectation the lists pass through is warned about at start.
    @Test func anInterceptListFromAFileDrivesTheBinary() async throws {
        let list = try file("# only the control host\ncontrol.test   # the app's unpinned API\n")
        defer { try? FileManager.default.removeItem(atPath: list) }
        let proxy = try await ProxyProcess.start([
            "--intercept-hosts", "@" + list, "--resolve", "control.test:127.0.0.1",
            "--resolve", "pinned.test:127.0.0.1", "--expect", "intercepted:*.pinned.test",
        ])
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let passed = try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)",
                "--cacert", pki.root, origin.url("/hello", hostname: "pinned.test"),
            ])
        #expect(
            passed.stdoutText == "hello from origin",
            "the origin's own certificate, as the test root vouches for it: \(passed)")
        let intercepted = try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)",
                "--cacert", proxy.caDirectory + "/ca.pem", origin.url("/hello", hostname: "control.test"),
            ])
        #expect(intercepted.stdoutText == "hello from origin", "\(intercepted)")
        let logged = await Poll.until {
            proxy.outputText.contains(
                "PASSTHROUGH pinned.test:\(origin.port) (host lists: TLS relayed untouched, no verdict)")
        }
        #expect(logged, "\(proxy.outputText)")
        #expect(
            await Poll.until { proxy.outputText.contains("control.test:\(origin.port): INTERCEPTED") },
            "\(proxy.outputText)")
        #expect(
            proxy.outputText.contains(
                "warning: --expect intercepted:*.pinned.test: hosts matching *.pinned.test are passed through "
                    + "untouched by --intercept-hosts and get no verdict"), "\(proxy.outputText)")
        await proxy.stop()
        await origin.stop()
        #expect(!proxy.outputText.contains("pinned.test:\(origin.port): INTERCEPTED"))
    }
}
