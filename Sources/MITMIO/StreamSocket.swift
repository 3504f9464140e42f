import Dispatch
import CMITMShims
#if canImport(Glibc)
import Glibc
#endif

/// What a `StreamSocket` reports to its owner, always on the socket's loop.
public protocol StreamSocketDelegate: AnyObject {
    /// Bytes arrived. The buffer is only valid during the call.
    func socket(_ socket: StreamSocket, didRead bytes: UnsafeRawBufferPointer)
    /// The peer finished sending (FIN).
    func socketDidReadEOF(_ socket: StreamSocket)
    /// A read or write failed (ECONNRESET, EPIPE, ...). The socket is closed afterwards by its owner.
    func socket(_ socket: StreamSocket, didFail error: SystemCallError)
    /// Everything queued for writing has been sent.
    func socketDidDrain(_ socket: StreamSocket)
}

/// A nonblocking TCP socket on an event loop, with a write queue and pausable reads.
/// Confined to its loop: every method must be called on `loop.queue`.
// @unchecked Sendable: confined to one loop's serial queue; Dispatch handlers capture it there.
public final class StreamSocket: @unchecked Sendable {
    /// The loop that owns this socket.
    public let loop: EventLoop
    /// The file descriptor; closed only after both sources were cancelled.
    public let descriptor: Int32
    /// Receives events.
    public weak var delegate: StreamSocketDelegate?

    private let readSource: DispatchSourceRead
    private let writeSource: DispatchSourceWrite
    private var readGate: SourceGate
    private var writeGate: SourceGate
    private var readSuspended: Bool { !readGate.isRunning }
    private var writeSuspended: Bool { !writeGate.isRunning }
    private var pendingWrites: [[UInt8]] = []
    private var firstWriteOffset = 0
    private var shutdownAfterFlush = false
    /// Bytes queued and not yet accepted by the kernel.
    public private(set) var bufferedOutputBytes = 0
    /// Whether `close()` was called.
    public private(set) var isClosed = false
    private var connectCompletion: ((SystemCallError?) -> Void)?

    /// Wraps a connected (or connecting) nonblocking descriptor; takes ownership of it.
    /// Must be called on `loop.queue`.
    public init(descriptor: Int32, loop: EventLoop) {
        self.descriptor = descriptor
        self.loop = loop
        readSource = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: loop.queue)
        writeSource = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: loop.queue)
        readGate = SourceGate(readSource)
        writeGate = SourceGate(writeSource)
        let remaining = Mutexless(count: 2)
        let closeOnce: @Sendable () -> Void = {
            if remaining.decrement() == 0 { Glibc.close(descriptor) }
        }
        readSource.setCancelHandler(handler: closeOnce)
        writeSource.setCancelHandler(handler: closeOnce)
        readSource.setEventHandler { [unowned self] in self.readAvailable() }
        writeSource.setEventHandler { [unowned self] in self.writable() }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close() }

    /// Starts (or resumes) delivering reads.
    public func resumeReading() {
        guard !isClosed, readSuspended else { return }
        readGate.run()
        // After EPOLLHUP Dispatch no longer watches the descriptor (see readAvailable), so a source resumed
        // after that would never fire: read once now; EAGAIN just means "wait for the source".
        loop.execute { [weak self] in self?.readAvailable() }
    }

    /// Reads now if reading is on: a safety net for readiness that Dispatch failed to report (seen on
    /// Linux for some sockets' first data or final FIN). Costs one `recv` returning EAGAIN otherwise.
    public func pollRead() {
        guard !isClosed, !readSuspended else { return }
        readAvailable()
    }

    /// Stops delivering reads until `resumeReading()` (backpressure).
    public func pauseReading() {
        guard !isClosed, !readSuspended else { return }
        readGate.hold()
    }

    /// Whether reads are currently delivered.
    public var isReading: Bool { !readSuspended && !isClosed }

    /// Queues bytes and sends what the kernel takes now.
    public func write(_ bytes: [UInt8]) {
        guard !isClosed, !bytes.isEmpty else { return }
        pendingWrites.append(bytes)
        bufferedOutputBytes += bytes.count
        if pendingWrites.count == 1 { flush() }
    }

    /// Sends FIN once everything queued has been written.
    public func shutdownWriteAfterFlush() {
        guard !isClosed else { return }
        shutdownAfterFlush = true
        if pendingWrites.isEmpty { Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Cancels both sources; the descriptor is closed once both cancel handlers have run.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        pendingWrites = []
        bufferedOutputBytes = 0
        readGate.cancel()
        writeGate.cancel()
        connectCompletion = nil
    }

    /// Starts a nonblocking connect to `address` on `loop`; `completion` runs on the loop.
    /// Returns the socket while the connect is in progress (nil when it already completed or failed):
    /// closing it abandons the attempt, and `completion` then never runs.
    @discardableResult
    public static func connect(
        to address: SocketAddress,
        on loop: EventLoop,
        _ completion: @escaping (Result<StreamSocket, SystemCallError>) -> Void
    ) -> StreamSocket? {
        let descriptor = Glibc.socket(address.family, mitm_sock_stream_nonblocking, 0)
        guard descriptor >= 0 else {
            completion(.failure(SystemCallError(call: "socket", errno: errno)))
            return nil
        }
        let result: SystemCallResult<Int32>
        do {
            result = try systemCall("connect") { address.withSockAddr { Glibc.connect(descriptor, $0, $1) } }
        } catch {
            Glibc.close(descriptor)
            completion(.failure(error))
            return nil
        }
        let socket = StreamSocket(descriptor: descriptor, loop: loop)
        if case .done = result {
            completion(.success(socket))
            return nil
        }
        // The completion keeps the socket alive until the connect finishes; running it breaks the cycle.
        socket.connectCompletion = { error in
            if let error {
                socket.close()
                completion(.failure(error))
            } else {
                completion(.success(socket))
            }
        }
        // Linux reports a refused connect as EPOLLERR|EPOLLHUP without EPOLLOUT, which Dispatch does not
        // always deliver to a write source: watch for readability too, and finish on whichever fires first.
        socket.writeGate.run()
        return socket
    }

    /// Reads until the kernel has nothing more (EAGAIN), the peer's FIN, an error, or the owner pauses.
    ///
    /// Dispatch on Linux turns EPOLLHUP (our FIN sent and the peer's received) into one last event and then
    /// removes the descriptor from epoll for good: whatever that last run leaves unread, the FIN included,
    /// is never announced again (and readiness may be reported once per arrival). So a run never stops at a
    /// short read; after a few full buffers it yields to the loop and continues on its own rather than
    /// waiting for the source.
    private func readAvailable() {
        if connectCompletion != nil {
            finishConnect()
            return
        }
        let scratch = loop.readScratch
        for _ in 0..<8 {
            guard !isClosed, !readSuspended else { return }
            let count = Glibc.recv(descriptor, scratch.baseAddress, scratch.count, 0)
            if count > 0 {
                delegate?.socket(self, didRead: UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
                continue
            }
            if count == 0 {
                pauseReading()
                delegate?.socketDidReadEOF(self)
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return
            default:
                let error = SystemCallError(call: "recv", errno: errno)
                pauseReading()
                delegate?.socket(self, didFail: error)
                return
            }
        }
        loop.execute { [weak self] in self?.readAvailable() }
    }

    private func writable() {
        if connectCompletion != nil {
            finishConnect()
            return
        }
        flush()
    }

    /// The nonblocking connect ended (either source fired): suspends both sources and reports SO_ERROR.
    private func finishConnect() {
        guard let completion = connectCompletion else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        if code == 0 && SocketAddress.peer(of: descriptor) == nil { return }  // not connected yet: keep waiting
        connectCompletion = nil
        writeGate.hold()
        completion(code == 0 ? nil : SystemCallError(call: "connect", errno: code))
    }

    private func flush() {
        while !isClosed, let first = pendingWrites.first {
            let sent = first.withUnsafeBytes { buffer in
                Glibc.send(descriptor, buffer.baseAddress! + firstWriteOffset, buffer.count - firstWriteOffset, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                firstWriteOffset += sent
                bufferedOutputBytes -= sent
                if firstWriteOffset == first.count {
                    pendingWrites.removeFirst()
                    firstWriteOffset = 0
                }
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                writeGate.run()
                return
            default:
                let error = SystemCallError(call: "send", errno: errno)
                pendingWrites = []
                bufferedOutputBytes = 0
                delegate?.socket(self, didFail: error)
                return
            }
        }
        guard !isClosed else { return }
        writeGate.hold()
        if shutdownAfterFlush { Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
        delegate?.socketDidDrain(self)
    }
}

/// A countdown shared by the two cancel handlers, which Dispatch runs on the same serial queue.
// @unchecked Sendable: only touched from the owning loop's serial queue.
private final class Mutexless: @unchecked Sendable {
    private var count: Int
    init(count: Int) { self.count = count }
    func decrement() -> Int {
        count -= 1
        return count
    }
}
