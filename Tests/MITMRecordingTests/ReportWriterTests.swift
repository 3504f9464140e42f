import Foundation
import MITMCore
@_spi(CommandLine) import MITMRecording
import TestSupport
import Testing

/// `--report`: the final report written on exit stays the file's last word.
@Suite struct ReportWriterTests {
    @Test func aRewriteStillScheduledAtExitDoesNotReplaceTheFinalReport() async throws {
        let path = TemporaryDirectory.path("report") + ".json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try ReportWriter(
            path: path,
            snapshot: { final, _ in
                VerdictReport(
                    final: final, listen: "127.0.0.1:8080", caCertificate: "ca.pem", silenceWindowSeconds: 3,
                    connections: [], expectations: [])
            }
        ) { Issue.record("report error: \($0)") }
        writer.scheduleUpdate()  // a verdict just before the signal: a rewrite due in 0.1 s
        writer.writeFinal()
        // Watch the file for ten times the rewrite's delay: it must stay final.
        let replaced = await Poll.until(timeout: .seconds(1)) {
            let data = try? Data(contentsOf: URL(fileURLWithPath: path))
            return (try? data.map(VerdictReport.decode))??.final == false
        }
        #expect(!replaced, "a scheduled rewrite replaced the final report with a non-final one")
    }
}
