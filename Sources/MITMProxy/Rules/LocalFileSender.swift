import Foundation

/// Reads a map-local file in 64 KiB pieces as the client takes them; never the whole file at once. It owns the
/// descriptor `ConfinedFile` opened when the request was decided, so what is sent is what was checked.
final class LocalFileSender {
    private let descriptor: Int32
    private var isOpen = true
    private var offset: Int
    private var remaining: Int
    /// The exchange the file answers.
    var exchange: HTTPRelay.PendingExchange?

    /// Takes `descriptor` (closed when done) to send bytes `offset ..< offset + length`.
    init(descriptor: Int32, offset: Int, length: Int) {
        self.descriptor = descriptor
        self.offset = offset
        remaining = length
    }

    var isFinished: Bool { remaining == 0 }

    /// The next piece.
    func next() -> Result<[UInt8], RuledAnswerFailure> {
        let count = min(remaining, 64 * 1024)
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        guard read > 0 else { return .failure(RuledAnswerFailure(read == 0 ? "the file got shorter while it was sent" : String(cString: strerror(errno)))) }
        offset += read
        remaining -= read
        return .success(read == count ? bytes : Array(bytes[..<read]))
    }

    func close() {
        if isOpen { Foundation.close(descriptor) }
        isOpen = false
        remaining = 0
    }

    deinit { close() }
}
