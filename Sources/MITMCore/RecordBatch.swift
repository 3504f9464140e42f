/// Whole records (`--events` lines, HAR entries) gathered between wake-ups of the recording queue, so that a file
/// gets one `write(2)` per batch instead of one per record. Events in: `record`, `endOfBatch`,
/// `writeFailed`; actions out: what to write now. Memory stays bounded: past `limit` bytes the gathered records are
/// handed out at once, and a record is never split.
public struct RecordBatch: Sendable {
    /// What the writer does after an event.
    public enum Action: Sendable, Equatable {
        /// Nothing yet.
        case wait
        /// Write these bytes (whole records) to the file.
        case write([UInt8])
    }

    /// Bytes gathered before they are handed out within a batch.
    public let limit: Int
    /// Records gathered and not yet handed out.
    public private(set) var pending: [UInt8] = []
    /// Set once a write failed: later records are ignored (the writer said so once).
    public private(set) var failed = false

    /// A batch handing out at least `limit` bytes at a time within a batch (64 KiB by default).
    public init(limit: Int = 64 * 1024) {
        self.limit = limit
    }

    /// Adds one record's bytes; hands out everything gathered once that reaches `limit`.
    public mutating func record(_ bytes: [UInt8]) -> Action {
        guard !failed else { return .wait }
        pending.append(contentsOf: bytes)
        return pending.count >= limit ? handOut() : .wait
    }

    /// The recording queue delivered its batch: hands out what is gathered, so records reach the file a few
    /// milliseconds after they happened.
    public mutating func endOfBatch() -> Action {
        guard !failed, !pending.isEmpty else { return .wait }
        return handOut()
    }

    /// The last write failed: nothing more is gathered.
    public mutating func writeFailed() {
        failed = true
        pending = []
    }

    private mutating func handOut() -> Action {
        let bytes = pending
        pending.removeAll(keepingCapacity: true)
        return .write(bytes)
    }
}
