/// A timer waiting in a loop's `TimerHeap`: its deadline, its place in the heap, and its work.
// @unchecked Sendable: confined to its loop's queue (the loop sends cancellations and late insertions there).
final class TimerEntry: @unchecked Sendable {
    let deadline: UInt64
    /// Breaks ties between equal deadlines: timers scheduled earlier fire earlier.
    let sequence: UInt64
    /// Position in the heap's array; -1 once fired or cancelled (or before it is added).
    var index = -1
    var work: (@Sendable () -> Void)?

    init(deadline: UInt64, sequence: UInt64, work: @escaping @Sendable () -> Void) {
        self.deadline = deadline
        self.sequence = sequence
        self.work = work
    }

    func firesBefore(_ other: TimerEntry) -> Bool {
        deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
    }
}

/// The pending timers of one loop, earliest first: a binary min-heap whose entries know their position,
/// so that cancelling one (the common fate of a deadline) is O(log n) and leaves nothing behind.
/// Confined to its loop, like everything the loop owns.
struct TimerHeap {
    private var entries: [TimerEntry] = []

    var isEmpty: Bool { entries.isEmpty }

    /// The earliest deadline, if any timer is pending.
    var earliestDeadline: UInt64? { entries.first?.deadline }

    mutating func insert(_ entry: TimerEntry) {
        entry.index = entries.count
        entries.append(entry)
        siftUp(entry.index)
    }

    /// Takes `entry` out if it is still pending (cancelling twice, or after it fired, does nothing).
    mutating func remove(_ entry: TimerEntry) {
        let position = entry.index
        guard position >= 0, position < entries.count, entries[position] === entry else { return }
        entry.index = -1
        let last = entries.removeLast()
        guard position < entries.count else { return }
        entries[position] = last
        last.index = position
        siftDown(position)
        siftUp(last.index)
    }

    /// Takes out every entry due at `now`, earliest first.
    mutating func popDue(at now: UInt64) -> [TimerEntry] {
        var due: [TimerEntry] = []
        while let first = entries.first, first.deadline <= now {
            remove(first)
            due.append(first)
        }
        return due
    }

    /// Drops every entry (the loop is stopping).
    mutating func removeAll() {
        entries.forEach {
            $0.index = -1
            $0.work = nil
        }
        entries.removeAll()
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].firesBefore(entries[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            var smallest = left
            if right < entries.count, entries[right].firesBefore(entries[left]) { smallest = right }
            guard entries[smallest].firesBefore(entries[parent]) else { return }
            swapAt(smallest, parent)
            parent = smallest
        }
    }

    private mutating func swapAt(_ first: Int, _ second: Int) {
        entries.swapAt(first, second)
        entries[first].index = first
        entries[second].index = second
    }
}
