import Foundation
import Testing

/// A rules file given to the real binary: its rules act, the console says so, and the HAR and the report name them.
@Suite(.tags(.live), .skippedInFastTier) struct RulesFileTests {
    @Test func aRulesFileAnswersDelaysAndIsNamedInTheHARAndTheReport() async throws {
        let origin = try await OriginServer.start()
        let directory = try TemporaryDirectory.make("rules-binary")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rules = directory + "/qa.yaml"
        try """
        rules:
          - name: small is down
            match: api.origin.test/small
            respond: 503
          - name: slow chunked
            match: {host: api.origin.test, path: /chunked, method: GET}
            delay: 2s
        """.write(toFile: rules, atomically: true, encoding: .utf8)
        let har = directory + "/run.har"
        let report = directory + "/report.json"
        let proxy = try await ProxyProcess.start([
            "--rules", rules, "--har", har, "--report", report,
            "--resolve", "api.origin.test:127.0.0.1",
        ])
        let curl = { (path: String) in
            try await Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "30", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                    proxy.caDirectory + "/ca.pem",
                    origin.url(path, hostname: "api.origin.test"), "-o", "/dev/null", "-w",
                    "%{http_code} %{time_total}",
                ], timeout: .seconds(40))
        }
        let small = try await curl("/small")
        #expect(small.stdoutText.hasPrefix("503 "), "\(small)")
        let chunked = try await curl("/chunked/5000")
        let fields = chunked.stdoutText.split(separator: " ")
        #expect(fields.first == "200", "\(chunked)")
        #expect((fields.count == 2 ? Double(fields[1]) ?? 0 : 0) >= 2, "\(chunked)")
        await proxy.stop()
        #expect(try await origin.requestsSeen() == ["GET /chunked/5000"])

        let log = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any])
        let entries = ((log["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        let ruleByPath = Dictionary(
            entries.compactMap { entry -> (String, String)? in
                guard let url = (entry["request"] as? [String: Any])?["url"] as? String,
                    let rule = entry["_rule"] as? String
                else { return nil }
                return (URL(string: url)?.path ?? url, rule)
            }, uniquingKeysWith: { first, _ in first })
        #expect(ruleByPath == ["/small": "small is down", "/chunked/5000": "slow chunked"], "\(entries)")

        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        let tallies = (summary["rules"] as? [[String: Any]]) ?? []
        #expect(tallies.map { $0["rule"] as? String } == ["small is down", "slow chunked"], "\(summary)")
        #expect(tallies.map { $0["fired"] as? Int } == [1, 1])
        #expect(
            proxy.outputText.contains(
                "rule \"small is down\": GET https://api.origin.test:\(origin.port)/small: answered 503"),
            "\(proxy.outputText)")
        await origin.stop()
    }

    @Test func aBadRulesFileStopsTheStartWithItsMistake() async throws {
        let directory = try TemporaryDirectory.make("rules-bad")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rules = directory + "/qa.yaml"
        try
            "rules:\n  - match: api.test/x\n    respnd: 503\n  - match: api.test/ok\n    respond: 204\n  - match: api.test/y\n    delay: soon\n"
            .write(toFile: rules, atomically: true, encoding: .utf8)
        let result = try await Subprocess.run(
            try BuiltBinary.path(), ["--port", "0", "--ca-dir", directory + "/ca", "--rules", rules])
        #expect(result.status == 2, "\(result)")
        // Every mistake, each with its rule and line; not only the first.
        #expect(result.stderrText.contains("qa.yaml has 2 mistakes:"), "\(result)")
        #expect(result.stderrText.contains("qa.yaml rule 1: unknown key \"respnd\""), "\(result)")
        #expect(result.stderrText.contains("qa.yaml rule 3: delay \"soon\""), "\(result)")
        #expect(result.stderrText.contains("(line 2)") && result.stderrText.contains("(line 6)"), "\(result)")
        let flag = try await Subprocess.run(
            try BuiltBinary.path(), ["--port", "0", "--ca-dir", directory + "/ca", "--throttle", "api.test=5g"])
        #expect(flag.status == 2, "\(flag)")
        #expect(flag.stderrText.contains("unknown network profile \"5g\""), "\(flag)")
    }

    /// Nine levels of nine aliases ("billion laughs"): 342 bytes that expand to 9^9 strings.
    private static let billionLaughs =
        ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        + zip("bcdefghi", "abcdefgh").map { name, previous in
            "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]"
        }

    @Test func aRulesFileOfNestedAliasesIsRefusedAtStartAtOnce() async throws {
        let directory = try TemporaryDirectory.make("rules-aliases")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rules = directory + "/laughs.yaml"
        try Self.billionLaughs.joined(separator: "\n").write(toFile: rules, atomically: true, encoding: .utf8)
        // Expanding the aliases would pass 512 MiB of data within seconds (and the timeout kills a proxy that hangs).
        let result = try await Subprocess.run(
            "prlimit",
            [
                "--data=\(512 << 20)", "--", try BuiltBinary.path(), "--port", "0", "--ca-dir", directory + "/ca",
                "--rules", rules,
            ], timeout: .seconds(20))
        #expect(result.status == 2, "\(result)")
        #expect(
            result.stderrText.contains("laughs.yaml:2:8: YAML aliases (*name) are not supported in rules files"),
            "\(result)")
        #expect(!result.timedOut, "refused before anything expanded, not killed by the timeout")
    }

    @Test func aRulesFileOfNestedAliasesOnReloadKeepsThePreviousRulesAndALaterVersionApplies() async throws {
        let origin = try await OriginServer.start()
        let directory = try TemporaryDirectory.make("rules-aliases-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rules = directory + "/qa.yaml"
        try "rules:\n  - name: teapot\n    match: api.origin.test/tea\n    respond: 418\n".write(
            toFile: rules, atomically: true, encoding: .utf8)
        let proxy = try await ProxyProcess.start(["--rules", rules, "--resolve", "api.origin.test:127.0.0.1"])
        try await proxy.limitData(to: 512 << 20)
        let status = {
            try await Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                    proxy.caDirectory + "/ca.pem",
                    origin.url("/tea", hostname: "api.origin.test"), "-o", "/dev/null", "-w", "%{http_code}",
                ], timeout: .seconds(20)
            ).stdoutText
        }
        #expect(try await status() == "418")
        try (["rules: []"] + Self.billionLaughs).joined(separator: "\n").write(
            toFile: rules, atomically: true, encoding: .utf8)
        let refused = await Poll.until {
            proxy.outputText.contains(
                "qa.yaml:3:8: YAML aliases (*name) are not supported in rules files; write the value out; "
                    + "keeping the previous 1 rule")
        }
        #expect(refused, "\(proxy.outputText)")
        #expect(try await status() == "418")
        try "rules:\n  - name: gone\n    match: api.origin.test/tea\n    respond: 410\n".write(
            toFile: rules, atomically: true, encoding: .utf8)
        let applied = await Poll.until { (try? await status()) == "410" }
        #expect(applied, "\(proxy.outputText)")
        await proxy.stop()
        await origin.stop()
    }
}
