import Glibc
import Synchronization
import TestSupport
import Testing

@testable import MITMIO

/// The loop's own thread: its timers (a heap of its own, not Dispatch's), work handed to it from other threads,
/// and its end when the loop is dropped.
@Suite struct EventLoopTests {
    @Test func timersFireInDeadlineOrderOnTheLoop() async {
        let loop = EventLoop(index: 0, label: "test.timers")
        let fired = EventInbox<Int>()
        let onLoop = Atomic<Bool>(true)
        // Armed together on the loop, so that none can fire before the others are armed, however loaded the machine.
        let timers = loop.sync {
            [(3, 0.06), (1, 0.02), (2, 0.04), (0, 0.0)].map { order, delay in
                loop.schedule(after: delay) {
                    if !loop.isCurrent { onLoop.store(false, ordering: .relaxed) }
                    fired.post(order)
                }
            }
        }
        var order: [Int] = []
        for _ in 0..<4 { if let next = await fired.next(within: 10) { order.append(next) } }
        #expect(order == [0, 1, 2, 3])
        let allOnLoop = onLoop.load(ordering: .relaxed)
        #expect(allOnLoop)
        withExtendedLifetime(timers) {}
    }

    @Test func aCancelledOrDroppedTimerNeverFires() async {
        let loop = EventLoop(index: 0, label: "test.cancel")
        let fired = EventInbox<String>()
        // Due well after they are stopped: on a loaded machine the test thread can be held up for a while between
        // arming a timer and stopping it, and a timer already due by then has rightly fired.
        let cancelled = loop.schedule(after: 0.3) { fired.post("cancelled") }
        cancelled.cancel()
        _ = loop.schedule(after: 0.3) { fired.post("dropped") }
        let kept = loop.sync { loop.schedule(after: 0.3) { fired.post("cancelled on the loop") } }
        loop.sync { kept.cancel() }
        let last = loop.schedule(after: 0.6) { fired.post("last") }
        let first = await fired.next(within: 10)
        #expect(
            first == "last",
            "first fired: \(first ?? "nothing within 10 s"); a timer due earlier fired although it was stopped")
        withExtendedLifetime(last) {}
    }

    @Test func aTimerArmedFromAnotherThreadWakesALoopWaitingWithoutDeadline() async {
        let loop = EventLoop(index: 0, label: "test.wake")
        let fired = EventInbox<Bool>()
        // Let the thread reach its wait with nothing to wake it for (no descriptor, no timer).
        loop.execute { fired.post(false) }
        #expect(await fired.next(within: 10) == false)
        let timer = loop.sync { loop.schedule(after: 0.01) { fired.post(true) } }
        let timerFromElsewhere = loop.schedule(after: 0.01) { fired.post(true) }
        #expect(await fired.next(within: 10) == true)
        #expect(await fired.next(within: 10) == true)
        withExtendedLifetime((timer, timerFromElsewhere)) {}
    }

    @Test func workHandedOverFromManyThreadsAllRunsInOrderPerSender() async {
        let loop = EventLoop(index: 0, label: "test.execute")
        let senders = 4
        let each = 5_000
        let ledger = SenderLedger(senders: senders)
        let done = EventInbox<Int>()
        await withTaskGroup(of: Void.self) { tasks in
            for sender in 0..<senders {
                tasks.addTask {
                    for value in 0..<each {
                        loop.execute {
                            ledger.note(value, from: sender)
                            if value == each - 1 { done.post(sender) }
                        }
                    }
                }
            }
        }
        var finished = 0
        for _ in 0..<senders where await done.next(within: 30) != nil { finished += 1 }
        #expect(finished == senders)
        #expect(ledger.outOfOrder == 0)
    }

    @Test func syncSeesWorkHandedOverBeforeIt() {
        let loop = EventLoop(index: 0, label: "test.sync")
        let done = Mutex(0)
        for _ in 0..<1_000 { loop.execute { done.withLock { $0 += 1 } } }
        #expect(loop.sync { done.withLock { $0 } } == 1_000)
    }

    @Test func droppingALoopEndsItsThread() async {
        var loop: EventLoop? = EventLoop(index: 0, label: "test.ending")
        let ran = EventInbox<Bool>()
        loop?.execute { ran.post(true) }  // handed-over work runs on the loop's own thread, once it is named
        #expect(await ran.next(within: 10) == true)
        #expect(threadCount(named: "mitm-ending") == 1)
        loop = nil
        // A thread's end raises no event to wait for: polled.
        #expect(await Poll.until { threadCount(named: "mitm-ending") == 0 }, "the thread outlived its loop")
    }
}

/// The last value seen from each sender, and how many came out of order.
private final class SenderLedger: Sendable {
    private let last: Mutex<[Int]>
    private let misordered = Atomic<Int>(0)

    init(senders: Int) { last = Mutex([Int](repeating: -1, count: senders)) }

    func note(_ value: Int, from sender: Int) {
        let previous = last.withLock { last -> Int in
            defer { last[sender] = value }
            return last[sender]
        }
        if previous != value - 1 { misordered.add(1, ordering: .relaxed) }
    }

    var outOfOrder: Int { misordered.load(ordering: .relaxed) }
}

/// Threads of this process whose name is `name`.
private func threadCount(named name: String) -> Int {
    guard let tasks = opendir("/proc/self/task") else { return -1 }
    defer { closedir(tasks) }
    var count = 0
    while let entry = readdir(tasks) {
        let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard task.first?.isNumber == true, let file = fopen("/proc/self/task/\(task)/comm", "r") else { continue }
        var buffer = [CChar](repeating: 0, count: 32)
        if fgets(&buffer, 32, file) != nil,
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == name + "\n"
        {
            count += 1
        }
        fclose(file)
    }
    return count
}
