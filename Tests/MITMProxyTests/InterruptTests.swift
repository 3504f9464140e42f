import Foundation
import MITMCore
import Testing

/// Nothing recorded is lost on Ctrl-C or SIGTERM.
@Suite(.tags(.live), .skippedInFastTier) struct InterruptTests {
    @Test(arguments: [SIGINT, SIGTERM])
    func theReportIsFinalAndCompleteAfterASignal(signal: Int32) async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let base = FileManager.default.temporaryDirectory.path + "/mitm-proxy-interrupt-\(UUID().uuidString)"
        let proxy = try RunningProxyProcess([
            "--port", "0", "--ca-dir", base, "--upstream-ca", pki.root, "--resolve", "control.test:127.0.0.1",
            "--report", base + "-report.json", "--events", base + "-events.jsonl", "--expect",
            "intercepted:control.test",
        ])
        let curl = try await Subprocess.run(
            "/usr/bin/curl",
            [
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

    /// Thirty exchanges finished, then fifty transfers in the middle of their responses when the signal comes: the
    /// proxy exits 0, and the HAR (valid against the HAR 1.2 schema), the report and the events file are complete,
    /// each holding every finished exchange exactly once.
    @Test(arguments: [SIGTERM, SIGINT])
    func withFiftyTransfersInFlightEveryFinishedExchangeIsRecorded(signal: Int32) async throws {
        let pki = try await TestPKI.shared()
        let origin = try await OriginServer.start(.tls(.origin))
        let base = FileManager.default.temporaryDirectory.path + "/mitm-proxy-inflight-\(UUID().uuidString)"
        let proxy = try RunningProxyProcess([
            "--port", "0", "--ca-dir", base, "--upstream-ca", pki.root, "-q", "--har", base + ".har",
            "--report", base + "-report.json", "--events", base + "-events.jsonl", "--expect", "intercepted:localhost",
            // The first transfers wait, stalled, while the next forty-nine tunnels open: sanitized builds on a slow
            // machine took over the default 60 s, and the idle timeout ended them before the signal came.
            "--idle-timeout", "600",
        ])
        let run = try await PythonClient.run(
            fixture: "inflight_signal.py",
            [
                String(proxy.port), String(proxy.process.processIdentifier), String(origin.port), base + "/ca.pem",
                "30", "50", String(signal),
            ], timeout: .seconds(120))
        let json = JSON(parsing: run.stdoutText)
        let finished = json["finished"].array.compactMap(\.string)
        #expect(finished.count == 30 && json["in_flight"].array.count == 50, "\(run)")
        let status = try await DedicatedThread.run { proxy.waitForExit() }
        #expect(status == 0)

        let har = try await HARRecordingTests.validated(base + ".har")
        for path in finished {
            let entries = har.entries.filter { $0.url.hasSuffix(path) }
            #expect(
                entries.count == 1 && entries.first?.status == 200 && entries.first?.error == nil,
                "HAR entries for \(path): \(entries)")
        }
        // What was in flight is there too, once each, marked as cut off by the stop.
        for path in json["in_flight"].array.compactMap(\.string) {
            let entries = har.entries.filter { $0.url.hasSuffix(path) }
            #expect(
                entries.count == 1 && entries.first?.error == "proxy stopping", "HAR entries for \(path): \(entries)")
        }

        let report = try VerdictReport.decode(try Data(contentsOf: URL(fileURLWithPath: base + "-report.json")))
        #expect(report.final && report.result == "pass")
        let host = report.hosts.first { $0.host == "localhost" }
        // Ten keep-alive connections for the finished exchanges, fifty for those in flight: all intercepted.
        #expect(host?.counts[.intercepted] == 60, "\(String(describing: host))")

        let lines = try String(contentsOfFile: base + "-events.jsonl", encoding: .utf8).split(separator: "\n").map {
            JSON(parsing: String($0))
        }
        #expect(lines.allSatisfy { !$0.isNull }, "every line of the events file is JSON")
        for path in finished {
            let responses = lines.filter {
                $0["type"].string == "response" && $0["url"].string?.hasSuffix(path) == true
            }
            #expect(responses.count == 1 && responses.first?["status"].int == 200, "events for \(path): \(responses)")
        }
        for suffix in [".har", "-report.json", "-events.jsonl"] {
            try? FileManager.default.removeItem(atPath: base + suffix)
        }
        try? FileManager.default.removeItem(atPath: base)
        await origin.stop()
    }
}
