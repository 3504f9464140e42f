import MITMIO

/// What a `StreamSocket` told its delegate.
enum SocketEvent: Sendable, Equatable {
    case read([UInt8])
    case endOfInput
    case failed(errno: Int32)
    case drained
}

/// A delegate that posts every event to an inbox; optionally pauses reading after each read, as a
/// relay does when the other side's buffer is full.
// @unchecked Sendable: the delegate methods run on the socket's loop; the inbox is thread-safe.
final class SocketRecorder: StreamSocketDelegate, @unchecked Sendable {
    let inbox = EventInbox<SocketEvent>()
    private let pausesAfterRead: Bool

    init(pausesAfterRead: Bool = false) {
        self.pausesAfterRead = pausesAfterRead
    }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        if pausesAfterRead { socket.pauseReading() }
        inbox.post(.read(Array(bytes)))
    }

    func socketDidReadEOF(_ socket: any ByteStream) { inbox.post(.endOfInput) }

    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { inbox.post(.failed(errno: error.errno)) }

    func socketDidDrain(_ socket: any ByteStream) { inbox.post(.drained) }

    /// Reads until `count` bytes arrived (the kernel may split them); nil if something else came first.
    func bytes(count: Int, within seconds: Double = 10) async -> [UInt8]? {
        var received: [UInt8] = []
        while received.count < count {
            guard case .read(let bytes)? = await inbox.next(within: seconds) else { return nil }
            received += bytes
        }
        return received
    }
}

extension EventLoop {
    /// Runs `work` on the loop and returns its result.
    func perform<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            execute { continuation.resume(returning: work()) }
        }
    }
}
