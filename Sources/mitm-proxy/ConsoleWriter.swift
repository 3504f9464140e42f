import Foundation
import Synchronization

/// Writes whole lines to stdout or stderr from any thread without interleaving.
final class ConsoleWriter: Sendable {
    private let lock = Mutex(())

    func out(_ line: String) { write(line, to: STDOUT_FILENO) }
    func err(_ line: String) { write(line, to: STDERR_FILENO) }

    private func write(_ line: String, to descriptor: Int32) {
        let bytes = Array((line + "\n").utf8)
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes {
                    Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
                }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
