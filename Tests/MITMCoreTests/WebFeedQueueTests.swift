import Testing

@testable import MITMCore

/// One page's feed without sockets: the writer is woken once per batch, only the latest board waits, and a page
/// that falls behind loses flow messages (counted, and told first) instead of holding anything up.
@Suite struct WebFeedQueueTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theWriterIsWokenOncePerBatch() {
        var queue = WebFeedQueue(capacity: 1_000)
        let first = queue.pushFlow(Array("a".utf8))
        let second = queue.pushFlow(Array("b".utf8))
        let board = queue.pushBoard(Array("B".utf8))
        #expect(first)
        #expect(!second, "already on its way")
        #expect(!board)
        let sent = queue.take()
        let again = queue.take()
        #expect(text(sent) == "Bab", "the board first, then the flows in order")
        #expect(again.isEmpty)
        let afterTake = queue.pushFlow(Array("c".utf8))
        #expect(afterTake, "idle again after a take")
    }

    @Test func onlyTheLatestBoardWaits() {
        var queue = WebFeedQueue(capacity: 1_000)
        _ = queue.pushBoard(Array("old".utf8))
        _ = queue.pushBoard(Array("new".utf8))
        let sent = queue.take()
        #expect(text(sent) == "new")
    }

    @Test func aPageThatFallsBehindLosesFlowMessagesAndIsToldFirst() {
        var queue = WebFeedQueue(capacity: 10)
        _ = queue.pushFlow(Array("12345".utf8))
        _ = queue.pushFlow(Array("67890".utf8))
        _ = queue.pushFlow(Array("x".utf8))
        #expect(queue.heldBytes == 0)
        #expect(queue.droppedTotal == 3)
        _ = queue.pushFlow(Array("y".utf8))
        let sent = text(queue.take())
        #expect(sent.hasPrefix("event: resync\ndata: {\"dropped\":3,\"droppedTotal\":3}\n\n"), "\(sent)")
        #expect(sent.hasSuffix("y"))
        #expect(queue.droppedSinceNotice == 0)
    }

    @Test func aFullConnectionIsNotWokenUntilItDrains() {
        var queue = WebFeedQueue(capacity: 1_000)
        let woken = queue.pushFlow(Array("a".utf8))
        queue.blocked()
        let wokenWhileFull = queue.pushFlow(Array("b".utf8))
        let takeOnDrain = queue.drained()
        let sent = queue.take()
        let takeOnIdleDrain = queue.drained()
        #expect(woken)
        #expect(!wokenWhileFull, "no use waking a connection that cannot write")
        #expect(takeOnDrain)
        #expect(text(sent) == "ab")
        #expect(!takeOnIdleDrain, "drained while not waiting: nothing to do")
    }

    @Test func eventStreamFramesCarryEveryLine() {
        #expect(String(decoding: ServerSentEvent.frame("flow", "{}"), as: UTF8.self) == "event: flow\ndata: {}\n\n")
        #expect(
            String(decoding: ServerSentEvent.frame("x", "a\nb\r\nc"), as: UTF8.self)
                == "event: x\ndata: a\ndata: b\ndata: c\n\n")
    }
}
