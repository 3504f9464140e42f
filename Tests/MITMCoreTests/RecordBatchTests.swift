import MITMCore
import Testing

/// How records are gathered for one write per batch of events, without a file.
@Suite struct RecordBatchTests {
    private func record(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func recordsWaitForTheEndOfTheBatchAndLeaveTogether() {
        var batch = RecordBatch(limit: 1024)
        #expect(batch.record(record("one\n")) == .wait)
        #expect(batch.record(record("two\n")) == .wait)
        #expect(batch.endOfBatch() == .write(record("one\ntwo\n")))
        #expect(batch.endOfBatch() == .wait, "nothing gathered: nothing to write")
        #expect(batch.pending.isEmpty)
    }

    @Test func pastTheLimitWholeRecordsLeaveAtOnceWithinABatch() {
        var batch = RecordBatch(limit: 10)
        #expect(batch.record(record("12345\n")) == .wait)
        #expect(
            batch.record(record("6789abc\n")) == .write(record("12345\n6789abc\n")),
            "never split: the record that crossed the limit goes too")
        #expect(batch.pending.isEmpty)
        #expect(batch.record(record("x\n")) == .wait)
        #expect(batch.endOfBatch() == .write(record("x\n")))
    }

    @Test func everyRecordLeavesExactlyOnceInOrder() {
        var batch = RecordBatch(limit: 100)
        var written: [UInt8] = []
        var expected: [UInt8] = []
        for index in 0..<1000 {
            let line = record("line \(index)\n")
            expected += line
            if case .write(let bytes) = batch.record(line) { written += bytes }
            if index % 37 == 0, case .write(let bytes) = batch.endOfBatch() { written += bytes }
            #expect(batch.pending.count < 100 + line.count)
        }
        if case .write(let bytes) = batch.endOfBatch() { written += bytes }
        #expect(written == expected)
    }

    @Test func afterAFailedWriteNothingIsGathered() {
        var batch = RecordBatch(limit: 1024)
        _ = batch.record(record("lost\n"))
        batch.writeFailed()
        #expect(batch.failed)
        #expect(batch.record(record("later\n")) == .wait)
        #expect(batch.endOfBatch() == .wait)
        #expect(batch.pending.isEmpty)
    }
}
