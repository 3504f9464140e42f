import Foundation
import MITMCore
import Synchronization

/// Writes events as JSON Lines to a file or stdout, one flushed line per event, from any thread.
@_spi(CommandLine) public final class EventLogWriter: Sendable {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let path: String
    private let failed = Mutex(false)
    private let onError: @Sendable (String) -> Void

    /// Opens `path` for writing (truncating), or stdout for `-`. `onError` is told once if a write fails.
    public init(path: String, onError: @escaping @Sendable (String) -> Void) throws(ProxyStartError) {
        self.path = path
        self.onError = onError
        if path == "-" {
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
            return
        }
        let opened = PrivateFile.openForWriting(path)
        guard opened >= 0 else {
            throw ProxyStartError.outputFile(flag: "--events", path: path, problem: "cannot open for writing: \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        ownsDescriptor = true
    }

    /// Appends the event's line.
    public func write(_ event: ProxyEvent) {
        let bytes = Array((EventLine(event).json() + "\n").utf8)
        failed.withLock { hasFailed in
            guard !hasFailed else { return }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 {
                    hasFailed = true
                    onError("cannot write events to \(path): \(String(cString: strerror(errno))); events are no longer recorded")
                    return
                }
                offset += written
            }
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }
}
