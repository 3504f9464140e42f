import Foundation
import MITMRules

/// Reads a map-local file in the pieces the rules' exchange machine asks for as the client takes them; never the
/// whole file at once. It owns the descriptor `ConfinedFile` opened when the request was decided, so what is sent is
/// what was checked.
final class LocalFileSender {
    private let descriptor: Int32
    private var isOpen = true
    /// Where the bytes sent start in the file, and how many there are.
    private let start: Int
    let length: Int
    /// The exchange's machine, handed over by `start` once the head went out: `sendingFile` until the last piece.
    private var machine = RuledExchange(streams: false)
    /// The exchange the file answers.
    var exchange: HTTPRelay.PendingExchange?

    /// Takes `descriptor` (closed when done) to send bytes `offset ..< offset + length`.
    init(descriptor: Int32, offset: Int, length: Int) {
        self.descriptor = descriptor
        start = offset
        self.length = length
    }

    /// Sends the pieces `machine` (sending this file) asks for.
    func start(_ machine: RuledExchange) {
        self.machine = machine
    }

    /// The next piece the machine asks for now that the client can take more (nil once every piece went), or why it
    /// cannot be read.
    func next() -> Result<[UInt8], RuledAnswerFailure>? {
        guard !isFinished, let actions = try? machine.handle(.clientHasRoom),
            case .sendFilePiece(let offset, let count)? = actions.first
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(start + offset)) }
        guard read == count else {
            _ = try? machine.handle(.fileFailed)
            return .failure(
                RuledAnswerFailure(
                    read >= 0 ? "the file got shorter while it was sent" : String(cString: strerror(errno))))
        }
        return .success(bytes)
    }

    /// Whether every piece was handed out (or none is asked for).
    var isFinished: Bool { !machine.sendsFile }

    func close() {
        if isOpen { Foundation.close(descriptor) }
        isOpen = false
    }

    deinit { close() }
}
