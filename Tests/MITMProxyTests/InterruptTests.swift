import Foundation
import MITMCore
import Testing

/// Nothing recorded is lost on Ctrl-C or SIGTERM.
@Suite struct InterruptTests {
    @Test(arguments: [SIGINT, SIGTERM])
    func theReportIsFinalAndCompleteAfterASignal(signal: Int32) async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let base = FileManager.default.temporaryDirectory.path + "/mitm-proxy-interrupt-\(UUID().uuidString)"
        let proxy = try RunningProxyProcess([
            "--port", "0", "--ca-dir", base, "--upstream-ca", pki.root, "--resolve", "control.test:127.0.0.1",
            "--report", base + "-report.json", "--events", base + "-events.jsonl", "--expect", "intercepted:control.test",
        ])
        let curl = try await Subprocess.run("/usr/bin/curl", [
            "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", base + "/ca.pem",
            "https://control.test:\(origin.port)/hello",
        ])
        #expect(curl.succeeded, "\(curl)")
        #expect(proxy.stop(signal: signal) == 0)
        let report = try VerdictReport.decode(try Data(contentsOf: URL(fileURLWithPath: base + "-report.json")))
        #expect(report.final)
        #expect(report.result == "pass")
        #expect(report.connections.map(\.verdict.kind) == [.intercepted])
        let events = try String(contentsOfFile: base + "-events.jsonl", encoding: .utf8).split(separator: "\n")
        let types = events.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["type"] as? String
        }
        #expect(types.count == events.count, "every line is JSON")
        #expect(types.contains("verdict") && types.contains("request") && types.contains("response"))
        await origin.stop()
    }
}
