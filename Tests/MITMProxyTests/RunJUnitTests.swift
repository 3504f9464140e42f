import Foundation
import Testing

/// `mitm-proxy --expect ... --junit FILE -- COMMAND`: one JUnit test case per expectation, and one for the client command.
@Suite struct RunJUnitTests {
    @Test func eachExpectationIsATestCase() async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let directory = try TemporaryDirectory.make("junit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await Subprocess.run(RepositoryLayout.builtExecutable, [
            "--ca-dir", "\(directory)/ca", "--upstream-ca", pki.root, "--silence-window", "1", "--resolve", "control.test:127.0.0.1",
            "--expect", "intercepted:control.test", "--expect", "refused:never.test", "--junit", "\(directory)/run.xml",
            "--", "curl", "-sS", "-o", "/dev/null", "--max-time", "10", "https://control.test:\(origin.port)/hello",
        ], timeout: .seconds(60))
        #expect(result.status == 1, "\(result)")
        let xml = try String(contentsOfFile: "\(directory)/run.xml", encoding: .utf8)
        #expect(xml.contains("tests=\"3\" failures=\"1\""), "\(xml)")
        #expect(xml.contains("<testcase classname=\"expectations\" name=\"expect intercepted:control.test\"/>"), "\(xml)")
        #expect(xml.contains("name=\"expect refused:never.test\">"), "\(xml)")
        await origin.stop()
    }
}
