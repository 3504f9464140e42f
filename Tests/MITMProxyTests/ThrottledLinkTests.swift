import MITMCore
import Testing

@testable import MITMProxy

/// The throttled link's decisions (`ThrottledLink`) on a hand clock, without sockets: what crosses each lane, when the
/// socket below stops and resumes reading, and what the consumer is owed.
@Suite struct ThrottledLinkTests {
    private static let millisecond: UInt64 = 1_000_000
    /// 100 ms each way, no bandwidth limit, no loss: bytes cross 100 ms after they were sent.
    private static let latency = ThrottleLane(bytesPerSecond: nil, oneWayDelay: 0.1, loss: 0)

    private func link(consumerReads: Bool = true) -> ThrottledLink {
        ThrottledLink(down: Self.latency, up: Self.latency, consumerReads: consumerReads, random: { 1 })
    }

    @Test func aWriteCrossesTheLinkAfterItsDelayAndTheConsumerIsToldWhenItMayWriteAgain() {
        var link = link()
        let bytes = [UInt8](repeating: 1, count: 300 * 1024)
        #expect(link.receive(.proxyWrote(bytes, now: 0)) == [.pump])
        #expect(link.receive(.sendDue(now: 50 * Self.millisecond)) == [])
        // 300 KiB on a link of 512 KiB: more than half, so the consumer waits.
        #expect(link.receive(.outputBuffered(socketBytes: 0)) == [])
        #expect(link.nextWake(now: 50 * Self.millisecond) == 100 * Self.millisecond)
        let released = link.receive(.sendDue(now: 100 * Self.millisecond))
        #expect(released == [.writeToSocket([UInt8](repeating: 1, count: 64 * 1024))])
        #expect(link.receive(.outputBuffered(socketBytes: 64 * 1024)) == [])
        #expect(link.receive(.outputBuffered(socketBytes: 0)) == [.signalDrained])
        #expect(link.receive(.outputBuffered(socketBytes: 0)) == [])
    }

    @Test func theEndOfWritingWaitsForTheBytesStillOnTheLink() {
        var link = link()
        _ = link.receive(.proxyWrote([1], now: 0))
        #expect(link.receive(.proxyEndsWriting) == [])
        #expect(link.outbound == .shutdownOwed)
        #expect(
            link.receive(.sendDue(now: 100 * Self.millisecond)) == [.writeToSocket([1]), .shutDownSocketWriting])
        #expect(link.outbound == .shutDown)
        #expect(link.receive(.proxyEndsWriting) == [])
        var idle = self.link()
        #expect(idle.receive(.proxyEndsWriting) == [.shutDownSocketWriting])
    }

    @Test func theClientsBytesAndItsEndReachAReadingConsumerAfterTheDelay() {
        var link = link()
        #expect(link.receive(.clientSent([9, 8], now: 0)) == [.pump])
        #expect(link.receive(.clientEnded(now: 10 * Self.millisecond)) == [.pump])
        #expect(link.receive(.receiveDue(now: 99 * Self.millisecond)) == [])
        #expect(link.receive(.receiveDue(now: 100 * Self.millisecond)) == [.deliver([9, 8])])
        #expect(link.receive(.deliveryDone(now: 100 * Self.millisecond)) == [])
        #expect(link.receive(.deliveryDone(now: 110 * Self.millisecond)) == [.deliverEnd])
        #expect(link.inbound == .ended)
        #expect(link.receive(.deliveryDone(now: 120 * Self.millisecond)) == [])
        #expect(link.nextWake(now: 120 * Self.millisecond) == nil)
    }

    @Test func aPausedConsumerGetsNothingAndItsResumeRunsARoundInALaterTurn() {
        var link = link(consumerReads: false)
        _ = link.receive(.clientSent([5], now: 0))
        #expect(link.receive(.receiveDue(now: 200 * Self.millisecond)) == [])
        #expect(link.nextWake(now: 200 * Self.millisecond) == nil)
        #expect(link.receive(.consumerResumes) == [.resumeSocket, .pumpSoon])
        #expect(link.receive(.consumerResumes) == [])
        #expect(link.receive(.receiveDue(now: 200 * Self.millisecond)) == [.deliver([5])])
        #expect(link.receive(.consumerPauses) == [.pauseSocket])
        #expect(link.consumer == .paused)
    }

    @Test func aFullLaneStopsTheSocketUntilItLetsBytesThrough() {
        var link = link()
        let full = [UInt8](repeating: 1, count: Self.latency.limit)
        #expect(link.receive(.clientSent(full, now: 0)) == [.pauseSocket, .pump])
        #expect(link.inbound == .heldForLane)
        #expect(link.receive(.clientSent([2], now: 0)) == [.pump])
        // A consumer that resumes meanwhile does not restart the socket while the lane is full.
        _ = link.receive(.consumerPauses)
        #expect(link.receive(.consumerResumes) == [.pumpSoon])
        var delivered = 0
        while case .deliver(let bytes)? = link.receive(.receiveDue(now: 100 * Self.millisecond)).first {
            delivered += bytes.count
        }
        #expect(delivered == full.count + 1)
        #expect(link.receive(.deliveryDone(now: 100 * Self.millisecond)) == [.resumeSocket])
        #expect(link.inbound == .flowing)
    }

    @Test func aDrainOfTheSocketIsPassedOnOnlyOnceTheLinkIsEmpty() {
        var link = link()
        _ = link.receive(.proxyWrote([1], now: 0))
        #expect(link.receive(.socketDrained) == [])
        _ = link.receive(.sendDue(now: 100 * Self.millisecond))
        #expect(link.receive(.socketDrained) == [.signalDrained])
        #expect(link.receive(.outputBuffered(socketBytes: 0)) == [])
    }

    @Test func aClosedLinkDecidesNothing() {
        var link = link()
        _ = link.receive(.proxyWrote([1], now: 0))
        #expect(link.receive(.closed) == [])
        #expect(link.isClosed)
        #expect(link.nextWake(now: 0) == nil)
        for event: ThrottledLink.Event in [
            .proxyWrote([2], now: 0), .proxyEndsWriting, .consumerResumes, .clientSent([3], now: 0),
            .sendDue(now: 100 * Self.millisecond), .receiveDue(now: 100 * Self.millisecond), .socketDrained,
        ] {
            #expect(link.receive(event) == [])
        }
    }
}
