import Foundation
@_spi(CommandLine) import MITMRecording
import TestSupport
import Testing

/// Issue 34, item 6: a HAR whose run dropped events says so in the file, not only on the console.
@Suite struct HARDroppedEventsTests {
    private func log(afterDropping dropped: Int) throws -> [String: Any] {
        let path = try TemporaryDirectory.make("har-dropped") + "/run.har"
        let writer = try HARWriter(path: path, redact: false, bodyLimit: 1024) { Issue.record("HAR error: \($0)") }
        writer.finish(droppedEvents: dropped)
        let document =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        return try #require(document?["log"] as? [String: Any])
    }

    @Test func aRunThatDroppedEventsWritesAnIncompleteHARThatSaysSo() throws {
        let incomplete = try log(afterDropping: 387)
        #expect(incomplete["_droppedEvents"] as? Int == 387)
        #expect((incomplete["comment"] as? String)?.hasPrefix("INCOMPLETE: 387 events of the run were dropped") == true)
        let complete = try log(afterDropping: 0)
        #expect(complete["_droppedEvents"] == nil && complete["comment"] == nil)
    }
}
