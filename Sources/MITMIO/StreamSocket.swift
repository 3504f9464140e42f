import CMITMShims

#if canImport(Glibc)
import Glibc
#endif

/// What a `ByteStream` (a `StreamSocket`) reports to its owner, always on the stream's loop.
public protocol StreamSocketDelegate: AnyObject {
    /// Bytes arrived. The buffer is only valid during the call.
    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer)
    /// The peer finished sending (FIN).
    func socketDidReadEOF(_ socket: any ByteStream)
    /// A read or write failed (ECONNRESET, EPIPE, ...). The socket is closed afterwards by its owner.
    func socket(_ socket: any ByteStream, didFail error: SystemCallError)
    /// Everything queued for writing has been sent.
    func socketDidDrain(_ socket: any ByteStream)
}

/// A nonblocking TCP socket on an event loop, with a write queue and pausable reads.
/// Confined to its loop: every method must be called on `loop.queue`.
///
/// The socket is in its loop's readiness set from `init` to `close`, edge-triggered for reading and
/// writing: a report comes only when readiness grows, so reads go on until `EAGAIN` or a short read (or EOF, or
/// an error) and writes until `EAGAIN`, and what the kernel still holds is remembered here.
// @unchecked Sendable: confined to one loop's serial queue; work it queues on the loop captures it there.
public final class StreamSocket: ByteStream, @unchecked Sendable {
    /// The loop that owns this socket.
    public let loop: EventLoop
    /// The file descriptor; closed by `close()`, which takes it out of the readiness set.
    public let descriptor: Int32
    /// Receives events. Held `unowned`, not `weak` (a weak reference would give each delegate a side table, and
    /// every retain and release of it the slow path): a delegate that goes away while the socket lives calls
    /// `detach(_:)` in its deinit.
    public unowned var delegate: StreamSocketDelegate? {
        didSet { delegateIdentity = delegate.map { ObjectIdentifier($0) } }
    }
    private var delegateIdentity: ObjectIdentifier?

    private var token: UInt64 = 0
    /// Why the socket could not join the readiness set; reported as a failure of the first read or write.
    private(set) var registrationError: SystemCallError?
    private var wantsRead = false
    /// False after a read returned `EAGAIN`, or less than asked for while no hang-up was reported: the kernel
    /// announces new data (or the FIN) with a new event then.
    private var mayBeReadable = true
    /// Whether an event reported a hang-up or an error: reads then go on to the EOF (or `EAGAIN`), as the FIN
    /// may already be behind the data and will get no event of its own.
    private var hangupReported = false
    private var readTurnQueued = false
    /// A write failure waiting for the next turn to be reported (see `flush(failingLater:)`).
    private var failureToReport: SystemCallError?
    private var pendingWrites: [[UInt8]] = []
    private var firstWriteOffset = 0
    private var shutdownAfterFlush = false
    /// Bytes queued and not yet accepted by the kernel.
    public private(set) var bufferedOutputBytes = 0
    /// Whether `close()` was called.
    public private(set) var isClosed = false
    /// The peer's `host:port` and host once read (a connected socket's peer does not change; requests name it often).
    private var knownPeer: (description: String, host: String)?
    /// Set while a nonblocking connect is in progress (see `connect(to:on:_:)`).
    var connectCompletion: ((SystemCallError?) -> Void)?
    /// How many reads one turn makes before it lets the loop's other sockets and timers run.
    private static let readsPerTurn = 16

    /// Wraps a connected (or connecting) nonblocking descriptor; takes ownership of it. `peer`, when known (as
    /// `accept` gives it), saves asking the kernel for it. Must be called on `loop.queue`.
    public init(descriptor: Int32, peer: SocketAddress? = nil, loop: EventLoop) {
        self.descriptor = descriptor
        self.loop = loop
        if let peer { knownPeer = Self.describe(peer) }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        do {
            token = try loop.register(self)
        } catch {
            registrationError = error
        }
    }

    deinit { close() }

    /// The peer's address as `host:port`, or `client` while it cannot be read (not connected yet, or reset
    /// before it was first asked for).
    public var peerDescription: String { peer?.description ?? "client" }

    /// The peer's IP address, or nil while it cannot be read.
    public var peerHost: String? { peer?.host }

    private var peer: (description: String, host: String)? {
        if let knownPeer { return knownPeer }
        guard let address = SocketAddress.peer(of: descriptor) else { return nil }
        knownPeer = Self.describe(address)
        return knownPeer
    }

    private static func describe(_ address: SocketAddress) -> (description: String, host: String) {
        let host = address.host
        return (SocketAddress.describe(host: host, port: address.port, family: address.family), host)
    }

    /// Starts (or resumes) delivering reads. Data that arrived while reading was paused is read in the
    /// next loop turn: no new readiness event would announce it.
    public func resumeReading() {
        guard !isClosed, !wantsRead else { return }
        wantsRead = true
        if mayBeReadable || registrationError != nil { queueReadTurn() }
    }

    /// Stops delivering reads until `resumeReading()` (backpressure). The kernel keeps the data.
    public func pauseReading() {
        wantsRead = false
    }

    /// Whether reads are currently delivered.
    public var isReading: Bool { wantsRead && !isClosed }

    /// Queues bytes and sends what the kernel takes now.
    public func write(_ bytes: [UInt8]) {
        guard !isClosed, !bytes.isEmpty else { return }
        pendingWrites.append(bytes)
        bufferedOutputBytes += bytes.count
        if pendingWrites.count == 1 { flush(failingLater: true) }
    }

    public func sendNow(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard !isClosed, pendingWrites.isEmpty, !shutdownAfterFlush, registrationError == nil,
            let base = bytes.baseAddress
        else { return 0 }
        var sent = 0
        while sent < bytes.count {
            let count = Glibc.send(descriptor, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if count >= 0 {
                sent += count
            } else if errno != EINTR {
                break
            }
        }
        return sent
    }

    /// Caps the kernel's send buffer at about `bytes` (which turns off its automatic growth): for a long-lived
    /// stream to a reader that may stop, so that what it holds stays small.
    public func limitKernelSendBuffer(to bytes: Int) {
        var size = Int32(clamping: bytes)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends FIN once everything queued has been written.
    public func shutdownWriteAfterFlush() {
        guard !isClosed else { return }
        shutdownAfterFlush = true
        if pendingWrites.isEmpty { Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
    }

    /// Leaves the readiness set and closes the descriptor: the one place where a socket's descriptor is closed.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        wantsRead = false
        pendingWrites = []
        bufferedOutputBytes = 0
        connectCompletion = nil
        if registrationError == nil { loop.forgetClosing(token: token) }
        Glibc.close(descriptor)
    }

    /// Closes with RST: a zero linger time makes the kernel drop what is queued and reset the connection.
    public func reset() {
        guard !isClosed else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Stops reporting to `delegate` if it is the current delegate: for a delegate's deinit (the socket may outlive it).
    public func detach(_ delegate: AnyObject) {
        if delegateIdentity == ObjectIdentifier(delegate) { self.delegate = nil }
    }

    private func queueReadTurn() {
        guard !readTurnQueued else { return }
        readTurnQueued = true
        requestTurn()
    }

    private func requestTurn() {
        if registrationError == nil {
            loop.requestTurn(token: token)
        } else {
            // Not in the readiness set, so not in the loop's table: the turn comes through a closure holding the socket.
            loop.execute { [self] in turnRequested() }
        }
    }

    /// Reads until `EAGAIN`, the peer's FIN, an error, or the owner pauses; or until a short read while no hang-up
    /// was reported (the queue was empty then, and whatever arrives later brings its own edge-triggered event: one
    /// `recv` that would say `EAGAIN` less per exchange). After `readsPerTurn` full reads the turn yields to the
    /// loop and continues in the next one.
    private func readAvailable() {
        guard !isClosed, wantsRead else { return }
        if let error = registrationError {
            wantsRead = false
            delegate?.socket(self, didFail: error)
            return
        }
        let scratch = loop.readScratch
        for _ in 0..<Self.readsPerTurn {
            guard !isClosed, wantsRead else { return }
            let count = Glibc.recv(descriptor, scratch.baseAddress, scratch.count, 0)
            if count > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: scratch[0..<count])
                if count >= WriteBatch.worthBatching {
                    let batch = loop.writeBatch
                    batch.begin()
                    delegate?.socket(self, didRead: bytes)
                    batch.end()
                } else {
                    delegate?.socket(self, didRead: bytes)
                }
                if count < scratch.count && !hangupReported {
                    mayBeReadable = false
                    return
                }
                continue
            }
            if count == 0 {
                wantsRead = false
                delegate?.socketDidReadEOF(self)
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                mayBeReadable = false
                return
            default:
                let error = SystemCallError(call: "recv", errno: errno)
                wantsRead = false
                delegate?.socket(self, didFail: error)
                return
            }
        }
        queueReadTurn()
    }

    /// Sends queued bytes until the kernel says `EAGAIN` (the next writable event continues) or the
    /// queue is empty (then FIN if asked, and `socketDidDrain`).
    /// `failingLater`: called from `write`, so a failure is reported in a later loop turn; the owner is in the
    /// middle of its own work and must not be torn down under it.
    private func flush(failingLater: Bool = false) {
        if let error = registrationError {
            pendingWrites = []
            bufferedOutputBytes = 0
            report(error, later: failingLater)
            return
        }
        while !isClosed, let first = pendingWrites.first {
            let sent = first.withUnsafeBytes { buffer in
                Glibc.send(
                    descriptor, buffer.baseAddress! + firstWriteOffset, buffer.count - firstWriteOffset,
                    Int32(MSG_NOSIGNAL))
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
            case EAGAIN, EWOULDBLOCK: return
            default:
                let error = SystemCallError(call: "send", errno: errno)
                pendingWrites = []
                bufferedOutputBytes = 0
                report(error, later: failingLater)
                return
            }
        }
        guard !isClosed else { return }
        if shutdownAfterFlush { Glibc.shutdown(descriptor, Int32(SHUT_WR)) }
        delegate?.socketDidDrain(self)
    }

    private func report(_ error: SystemCallError, later: Bool) {
        guard later else {
            delegate?.socket(self, didFail: error)
            return
        }
        failureToReport = error
        requestTurn()
    }
}

// What the loop calls: readiness reports and the turns asked for (`EventLoop.requestTurn(token:)`).
extension StreamSocket {
    /// A read turn (`queueReadTurn`) or a failure report (`report(_:later:)`) asked for. A socket that closed or went
    /// away meanwhile is no longer registered and gets no call.
    func turnRequested() {
        if readTurnQueued {
            readTurnQueued = false
            readAvailable()
        }
        if let error = failureToReport {
            failureToReport = nil
            if !isClosed { delegate?.socket(self, didFail: error) }
        }
    }

    /// Hang-ups and errors count as readable: the read that follows sees the EOF or the error.
    func readinessChanged(_ readiness: Readiness) {
        if connectCompletion != nil {
            finishConnect()
            return
        }
        if !readiness.isDisjoint(with: Readiness.readNow) {
            if !readiness.isDisjoint(with: [.readHangup, .hangup, .error]) { hangupReported = true }
            mayBeReadable = true
            readAvailable()
        }
        if !isClosed, !pendingWrites.isEmpty, !readiness.isDisjoint(with: [.writable, .error, .hangup]) {
            flush()
        }
    }
}
