import Foundation
import Testing

/// `mitm-proxy --expect ... --junit FILE -- COMMAND`: one JUnit test case per expectation, and one for the client command.
@Suite(.tags(.live), .skippedInFastTier) struct RunJUnitTests {
    @Test func eachExpectationIsATestCase() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let directory = try TemporaryDirectory.make("junit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable,
            [
                "--ca-dir", "\(directory)/ca", "--upstream-ca", pki.root, "--silence-window", "1", "--resolve",
                "control.test:127.0.0.1",
                "--expect", "intercepted:control.test", "--expect", "refused:never.test", "--junit",
                "\(directory)/run.xml",
                "--", "curl", "-sS", "-o", "/dev/null", "--max-time", "10", "https://control.test:\(origin.port)/hello",
            ], timeout: .seconds(60))
        #expect(result.status == 1, "\(result)")
        let xml = try String(contentsOfFile: "\(directory)/run.xml", encoding: .utf8)
        #expect(xml.contains("tests=\"3\" failures=\"1\""), "\(xml)")
        #expect(
            xml.contains("<testcase classname=\"expectations\" name=\"expect intercepted:control.test\" time=\""),
            "\(xml)")
        #expect(xml.contains("name=\"expect refused:never.test\" time=\""), "\(xml)")
        // Read back by Python's XML parser, as a CI test view reads it: well-formed, times in seconds, a failure body
        // saying what was expected and what was seen, and the run's summary as the suite's output.
        let parsed = try await Subprocess.run(
            "python3", ["-c", Self.reader, "\(directory)/run.xml"], timeout: .seconds(30))
        #expect(parsed.status == 0, "\(parsed)")
        let facts = try JSONSerialization.jsonObject(with: Data(parsed.stdout)) as? [String: Any] ?? [:]
        let times = facts["times"] as? [String: Double] ?? [:]
        #expect((facts["suite_time"] as? Double ?? 0) > 0, "\(facts)")
        #expect(
            times.count == 3 && (times["client command"] ?? 0) > 0
                && (times["expect intercepted:control.test"] ?? 0) > 0, "\(times)")
        let failure = facts["failure"] as? String ?? ""
        #expect(
            failure.contains("expected: refused:never.test") && failure.contains("seen: no matching host"), "\(failure)"
        )
        let out = facts["system_out"] as? String ?? ""
        #expect(out.contains("control.test") && out.contains("refused:never.test"), "\(out)")
        await origin.stop()
    }

    private static let reader = """
        import json, sys, xml.etree.ElementTree as ET
        suite = ET.parse(sys.argv[1]).getroot().find("testsuite")
        failure = [f.text for f in suite.iter("failure")]
        print(json.dumps({
            "suite_time": float(suite.get("time")),
            "times": {case.get("name"): float(case.get("time")) for case in suite.iter("testcase")},
            "failure": failure[0] if failure else None,
            "system_out": suite.findtext("system-out"),
        }))
        """
}
