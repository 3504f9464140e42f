import Foundation
import Testing

/// The HAR, events and report files hold what the traffic held (cookies, tokens), so only their owner may read them.
@Suite(.tags(.live), .skippedInFastTier) struct RecordedFilePermissionsTests {
    @Test func harEventsAndReportAreReadableByTheOwnerOnly() async throws {
        let directory = try TemporaryDirectory.make("private-files")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin = try await OriginServer.start(.plainHTTP)
        let har = directory + "/run.har"
        let events = directory + "/events.jsonl"
        let report = directory + "/report.json"
        // A file left world-readable by an earlier run is overwritten as a private one.
        #expect(
            FileManager.default.createFile(
                atPath: har, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644]))
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable,
            [
                "--ca-dir", directory + "/ca", "--har", har, "--events", events, "--report", report,
                "--", "curl", "-sS", "--max-time", "20", "-o", "/dev/null", "http://127.0.0.1:\(origin.port)/hello",
            ], timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        for path in [har, events, report] {
            #expect(Self.permissions(path) == 0o600, "\(path)")
        }
        #expect(try String(contentsOfFile: har, encoding: .utf8).contains("/hello"))
    }

    private static func permissions(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0 else { return -1 }
        return Int(info.st_mode & 0o777)
    }
}
