import Foundation
import Testing

/// Throttle values the proxy cannot simulate, given to the real binary: refused at start with exit 2 and the allowed
/// range, and refused in a reloaded rules file with the previous rules kept (the proxy keeps serving).
@Suite(.tags(.live), .skippedInFastTier) struct ThrottleLimitsCLITests {
    @Test(arguments: [
        "down=1e300kbit", "api.test=down=99999999999999999999kbit", "up=1e300kbit",
        "latency=1e300s", "api.test=latency=9999999999999s",
    ])
    func anOutOfRangeThrottleStopsTheStart(value: String) async throws {
        let directory = try TemporaryDirectory.make("throttle-range")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await Subprocess.run(
            try BuiltBinary.path(), ["--port", "0", "--ca-dir", directory + "/ca", "--throttle", value],
            timeout: .seconds(90))
        #expect(result.status == 2, "\(result)")
        #expect(result.stderrText.contains("--throttle \(value): "), "\(result)")
        #expect(
            result.stderrText.contains(" is outside ") && result.stderrText.contains(" must be between "), "\(result)")
    }

    @Test func anOutOfRangeThrottleInAReloadedRulesFileKeepsThePreviousRules() async throws {
        let origin = try await OriginServer.start()
        let directory = try TemporaryDirectory.make("throttle-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rules = directory + "/qa.yaml"
        let file = { (profile: String) in
            "rules:\n  - name: slow api\n    match: api.origin.test\n    throttle: \(profile)\n"
        }
        try file("down=100mbit").write(toFile: rules, atomically: true, encoding: .utf8)
        let proxy = try await ProxyProcess.start(["--rules", rules, "--resolve", "api.origin.test:127.0.0.1"])
        let curl = {
            try await Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "20", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                    proxy.caDirectory + "/ca.pem",
                    origin.url("/hello", hostname: "api.origin.test"), "-w", " %{http_code}",
                ], timeout: .seconds(30))
        }
        #expect(try await curl().stdoutText == "hello from origin 200")
        try file("down=1e300kbit").write(toFile: rules, atomically: true, encoding: .utf8)
        let refused = await Poll.until(timeout: .seconds(10)) {
            proxy.outputText.contains("keeping the previous 1 rule")
        }
        #expect(refused, "\(proxy.outputText)")
        #expect(
            proxy.outputText.contains("\(rules) rule 1 (slow api): down=1e300kbit is outside"), "\(proxy.outputText)")
        let after = try await curl()
        #expect(after.stdoutText == "hello from origin 200", "\(after)")
        await proxy.stop()
        await origin.stop()
    }
}
