import Testing

@testable import MITMIO

/// The writes of one delivered read, flushed when its delivery ends: without sockets.
@Suite struct WriteBatchTests {
    static func delivering(_ batch: WriteBatch, _ delivery: () -> Void) {
        batch.begin()
        delivery()
        batch.end()
    }

    final class Writer: BatchedWriter {
        let name: String
        let log: Log
        var whenFlushed: () -> Void = {}
        init(_ name: String, _ log: Log) {
            self.name = name
            self.log = log
        }
        func flushBatchedWrites() {
            log.lines.append("flush \(name)")
            whenFlushed()
        }
    }

    final class Log { var lines: [String] = [] }

    @Test func writersThatAskDuringADeliveryAreFlushedWhenItEndsInTheOrderTheyAsked() {
        let batch = WriteBatch()
        let log = Log()
        let client = Writer("client", log)
        let upstream = Writer("upstream", log)
        #expect(!batch.isOpen)
        Self.delivering(batch) {
            #expect(batch.isOpen)
            #expect(batch.flushAtEnd(client))
            #expect(batch.flushAtEnd(upstream))
            log.lines.append("delivered")
        }
        #expect(log.lines == ["delivered", "flush client", "flush upstream"])
        #expect(!batch.isOpen)
    }

    @Test func noBatchOpenMeansFlushNowAndNothingIsKept() {
        let batch = WriteBatch()
        let log = Log()
        #expect(!batch.flushAtEnd(Writer("late", log)))
        Self.delivering(batch) {}
        #expect(log.lines.isEmpty, "a writer that was told to flush now was flushed again")
    }

    @Test func aNestedDeliveryFlushesOnlyWhenTheOutermostEnds() {
        let batch = WriteBatch()
        let log = Log()
        Self.delivering(batch) {
            Self.delivering(batch) { _ = batch.flushAtEnd(Writer("inner", log)) }
            log.lines.append("inner ended")
            _ = batch.flushAtEnd(Writer("outer", log))
        }
        #expect(log.lines == ["inner ended", "flush inner", "flush outer"])
    }

    @Test func aFlushThatDeliversAnotherReadHasItsWritersFlushedToo() {
        let batch = WriteBatch()
        let log = Log()
        let relaying = Writer("relaying", log)
        let next = Writer("next", log)
        relaying.whenFlushed = { Self.delivering(batch) { _ = batch.flushAtEnd(next) } }
        Self.delivering(batch) { _ = batch.flushAtEnd(relaying) }
        #expect(log.lines == ["flush relaying", "flush next"])
        #expect(!batch.isOpen)
    }
}
