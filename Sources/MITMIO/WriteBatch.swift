/// A writer whose output may wait for the end of the read being delivered on its loop (`WriteBatch`).
public protocol BatchedWriter: AnyObject {
    /// Sends what waited for the end of the batch.
    func flushBatchedWrites()
}

/// The writes one delivered read causes, sent together when its delivery ends: a TLS relay that gets 64 KiB from one
/// side writes four records to the other, and they leave in one `send` instead of four (each `send` on a connection
/// costs the kernel a segment, and wakes the reader once more). Only reads longer than one record open a batch
/// (`worthBatching`): a shorter one makes one record on the other side, which leaves as it is made, uncopied.
/// Batches nest; the outermost one's end flushes, in the order the writers asked. Confined to its loop; no sockets,
/// so it is tested on its own.
public final class WriteBatch {
    private var depth = 0
    private var waiting: [any BatchedWriter] = []
    private var isFlushing = false

    /// The shortest read worth a batch: longer than a TLS record (16 KiB of data and its framing).
    public static let worthBatching = 16_384 + 256

    public init() {}

    /// Whether a read is being delivered: a writer that asks now (`flushAtEnd`) is flushed when it ends.
    public var isOpen: Bool { depth > 0 }

    /// A read's delivery begins.
    public func begin() { depth += 1 }

    /// A read's delivery ended; the outermost end flushes the writers that asked. A batch that a flush opens (its
    /// writes deliver another read) hands its writers to the flush already running.
    public func end() {
        depth -= 1
        guard depth == 0, !isFlushing, !waiting.isEmpty else { return }
        isFlushing = true
        var index = 0
        while index < waiting.count {
            let writer = waiting[index]
            writer.flushBatchedWrites()
            index += 1
        }
        waiting.removeAll(keepingCapacity: true)
        isFlushing = false
    }

    /// Asks for `writer` to be flushed at the batch's end; false when no batch is open (flush now, then).
    /// Ask once per batch: a writer remembers that it asked.
    public func flushAtEnd(_ writer: any BatchedWriter) -> Bool {
        guard depth > 0 else { return false }
        waiting.append(writer)
        return true
    }
}
