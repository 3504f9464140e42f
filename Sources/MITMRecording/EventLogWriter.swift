import Foundation
import MITMCore
import Synchronization

/// Writes events as JSON Lines to a file or stdout, from any thread: lines are gathered while the recording queue
/// delivers a batch of events and written with one `write(2)` when it ends (`flush()`), or every 64 KiB.
@_spi(CommandLine) public final class EventLogWriter: Sendable {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let path: String
    /// The lines gathered, and where each is written before it joins them (reused: its storage is not grown per line).
    private let batch = Mutex((lines: RecordBatch(), json: JSONWriter()))
    private let onError: @Sendable (String) -> Void

    /// Opens `path` for writing (truncating), or stdout for `-`. `onError` is told once if a write fails.
    public init(path: String, onError: @escaping @Sendable (String) -> Void) throws(RecordingFileError) {
        self.path = path
        self.onError = onError
        if path == "-" {
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
            return
        }
        let opened = PrivateFile.openForWriting(path)
        guard opened >= 0 else {
            throw RecordingFileError(
                .events, path: path, problem: "cannot open for writing: \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        ownsDescriptor = true
    }

    /// Adds the event's line; it reaches the file at the next `flush()` at the latest.
    public func write(_ event: ProxyEvent) {
        let line = EventLine(event)
        batch.withLock { batch in
            batch.json.clear()
            line.write(to: &batch.json)
            batch.json.newline()
            perform(batch.lines.record(batch.json.bytes), on: &batch.lines)
        }
    }

    /// Writes the lines gathered so far (the recording queue calls it after each batch of events).
    public func flush() {
        batch.withLock { batch in perform(batch.lines.endOfBatch(), on: &batch.lines) }
    }

    private func perform(_ action: RecordBatch.Action, on batch: inout RecordBatch) {
        guard case .write(let bytes) = action else { return }
        if let failure = FileOutput.write(bytes, to: descriptor) {
            batch.writeFailed()
            onError("cannot write events to \(path): \(failure); events are no longer recorded")
        }
    }

    deinit {
        flush()
        if ownsDescriptor { close(descriptor) }
    }
}
