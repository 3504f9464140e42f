import Dispatch
import Foundation
import MITMCore
import Synchronization
import Testing

@testable import MITMRecording

/// The recording queue under more events than its bound: slow subscribers slow the emitters and lose nothing; stuck
/// ones cost the emitters one wait, then their events are dropped and counted.
@Suite struct RecordingBackpressureTests {
    private static func event(_ number: Int) -> ProxyEvent {
        .badRequest(connectionID: number, peer: "127.0.0.1:1", reason: "event \(number)")
    }

    /// Emits `count` events from each of `threads` threads at once and returns when every emit returned.
    private static func emitConcurrently(_ fanOut: EventFanOut, threads: Int, count: Int) {
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for number in 0..<count { fanOut.emit(event(thread * count + number)) }
        }
    }

    @Test func aSlowSubscriberSlowsTheEmittersAndLosesNothing() {
        let fanOut = EventFanOut(capacity: 64)
        let seen = Mutex(Set<Int>())
        fanOut.subscribe { event in
            usleep(20)  // a subscriber slower than the emitters: a file on a busy disk
            if case .badRequest(let id, _, _) = event { _ = seen.withLock { $0.insert(id) } }
        }
        Self.emitConcurrently(fanOut, threads: 3, count: 2_000)
        fanOut.flush()
        #expect(fanOut.droppedCount == 0)
        #expect(seen.withLock { $0.count } == 6_000)
    }

    @Test func aStuckSubscriberCostsOneWaitThenEventsAreDroppedAndCounted() {
        let fanOut = EventFanOut(capacity: 16, stallTimeout: .milliseconds(100))
        let release = DispatchSemaphore(value: 0)
        let delivered = Atomic<Int>(0)
        fanOut.subscribe { _ in
            if delivered.add(1, ordering: .relaxed).newValue == 1 { release.wait() }  // a pipe nobody reads
        }
        let started = ContinuousClock.now
        Self.emitConcurrently(fanOut, threads: 2, count: 200)
        let waited = ContinuousClock.now - started
        let dropped = fanOut.droppedCount
        #expect(dropped > 300, "events beyond the bound are dropped once the subscriber is found stuck")
        #expect(waited < .seconds(30), "the emitters did not wait for the stuck subscriber for ever")
        release.signal()
        fanOut.flush()
        #expect(delivered.load(ordering: .relaxed) + dropped == 400, "every event was delivered or counted")
        fanOut.emit(Self.event(1_000))
        fanOut.flush()
        #expect(fanOut.droppedCount == dropped, "once it delivers again, nothing more is dropped")
    }

    @Test func aSubscriberThatEmitsIntoAFullQueueDoesNotWaitForItself() {
        let fanOut = EventFanOut(capacity: 8, stallTimeout: .seconds(60))
        let findings = Atomic<Int>(0)
        fanOut.subscribe { [fanOut] event in
            if case .badRequest(let id, _, _) = event, id < 1_000_000 {
                fanOut.emit(.badRequest(connectionID: 1_000_000 + id, peer: "-", reason: "finding"))
            } else {
                findings.add(1, ordering: .relaxed)
            }
        }
        Self.emitConcurrently(fanOut, threads: 2, count: 500)
        fanOut.flush()
        #expect(findings.load(ordering: .relaxed) == 1_000)
        #expect(fanOut.droppedCount == 0)
    }

    @Test func admissionWaitsWhileSubscribersProgressAndDropsOnceTheyAreStuck() {
        var admission = RecordingAdmission()
        let roomLeft = admission.emit(queued: 3, capacity: 4, mayWait: true, delivered: 0)
        #expect(roomLeft == .queue(startDraining: false))
        let full = admission.emit(queued: 4, capacity: 4, mayWait: true, delivered: 10)
        #expect(full == .wait(deliveredBefore: 10))
        let progressed = admission.waitTimedOut(deliveredBefore: 10, deliveredNow: 11)
        #expect(progressed, "it made progress: not stuck, and this emitter is still counted")
        let fullAgain = admission.emit(queued: 4, capacity: 4, mayWait: true, delivered: 11)
        #expect(fullAgain == .wait(deliveredBefore: 11))
        _ = admission.waitTimedOut(deliveredBefore: 11, deliveredNow: 11)
        let stuck = admission.emit(queued: 4, capacity: 4, mayWait: true, delivered: 11)
        #expect(stuck == .dropped)
        #expect(admission.dropped == 1)
        let deliveringAgain = admission.emit(queued: 4, capacity: 4, mayWait: true, delivered: 12)
        #expect(deliveringAgain == .wait(deliveredBefore: 12), "delivering again ends the stuck state")
        let woken = admission.roomMade()
        #expect(woken == 1)
        let counted = admission.waitTimedOut(deliveredBefore: 12, deliveredNow: 12)
        #expect(!counted, "its wake-up was given already: the emitter must take it")
        let fromTheQueue = admission.emit(queued: 9, capacity: 4, mayWait: false, delivered: 12)
        #expect(fromTheQueue == .queue(startDraining: false), "the recording queue itself never waits")
    }
}
