import MITMIO

/// What a leg reports to the relay that owns it, on the leg's loop.
enum LegEvent {
    /// Plaintext arrived.
    case data(UnsafeRawBufferPointer)
    /// The peer finished sending (FIN, or TLS close_notify).
    case endOfInput
    /// The leg failed (reset, TLS error); the reason is for the log.
    case failed(String)
    /// Everything written has been handed to the kernel.
    case drained
}

/// One side of a relay as plaintext: a plain socket, or a socket with TLS on it.
protocol Leg: AnyObject {
    /// Receives the leg's events. Set by the current owner (the relay).
    var onEvent: ((LegEvent) -> Void)? { get set }
    /// Queues plaintext toward the peer.
    func write(_ bytes: [UInt8])
    /// Queues plaintext lent for the call (a body relayed straight from the other leg's read): copied only where it
    /// has to wait.
    func write(_ bytes: UnsafeRawBufferPointer)
    /// Bytes queued toward the peer and not yet sent (ciphertext for TLS legs).
    var bufferedOutputBytes: Int { get }
    /// Stops delivering data (backpressure).
    func pauseReading()
    /// Delivers data again.
    func resumeReading()
    /// Ends output after what is queued (FIN; close_notify then FIN for TLS).
    func finishWriting()
    /// Closes at once.
    func close()
    /// Whether the leg was closed (by either side).
    var isClosed: Bool { get }
    /// The peer's address (`127.0.0.1:50123`), for log lines.
    var peerDescription: String { get }
    /// The peer's IP address, or nil when it could not be read.
    var peerHost: String? { get }
    /// Drops idle buffers (TLS record buffers) to keep idle connections small. Not redundant with OpenSSL's
    /// release-buffers mode: without it an idle intercepted connection holds 2.2 KiB more (bench idle scenario).
    func releaseIdleMemory()
    /// Also gives back grown buffers; for connections idle for a while.
    func compactIdleMemory()
    /// Holds small writes until `uncork()`, so one event's output leaves as one record and one send.
    func cork()
    /// Sends what `cork()` held.
    func uncork()
    /// The most unsent bytes the leg wants, when fewer than its feeder's high-water mark (a throttled link).
    var outputLimit: Int { get }
    /// Closes at once with a TCP reset.
    func reset()
    /// How the input ended, when it ended while no owner listened (a TLS leg between its handshake and its relay),
    /// once: the owner that takes the leg then hears it, instead of waiting on a peer that has gone.
    func takeUntoldInputEnding() -> LegEvent?
}

extension Leg {
    func write(_ bytes: UnsafeRawBufferPointer) { write(Array(bytes)) }

    /// The `--throttle` rule the leg's connection crosses, if any.
    var throttleRule: String? {
        let socket = (self as? PlainLeg)?.socket ?? (self as? TLSLeg)?.socket
        return (socket as? ThrottledStream)?.rule
    }

    /// Bytes a feeder with high-water mark `highWater` may still write before it should pause (negative: pause).
    func outputRoom(below highWater: Int) -> Int { min(highWater, outputLimit) - bufferedOutputBytes }
}

/// A leg that is the socket itself.
final class PlainLeg: Leg, StreamSocketDelegate {
    let socket: any ByteStream
    var onEvent: ((LegEvent) -> Void)?
    private var untoldInputEnding: LegEvent?

    init(socket: any ByteStream) {
        self.socket = socket
        socket.delegate = self
    }

    deinit { socket.detach(self) }

    /// Pieces lent while corked (HTTP/2 frames as nghttp2 makes them), sent together at `uncork()`.
    private var held: [UInt8] = []
    private var corked = false

    func write(_ bytes: [UInt8]) {
        sendHeld()
        socket.write(bytes)
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        if corked {
            held.append(contentsOf: bytes)
        } else {
            socket.write(Array(bytes))
        }
    }

    var bufferedOutputBytes: Int { socket.bufferedOutputBytes + held.count }
    func pauseReading() { socket.pauseReading() }
    func resumeReading() { socket.resumeReading() }
    func finishWriting() {
        sendHeld()
        socket.shutdownWriteAfterFlush()
    }
    func close() { socket.close() }
    func releaseIdleMemory() {}
    func compactIdleMemory() { held = [] }
    func cork() { corked = true }
    func uncork() {
        corked = false
        sendHeld()
    }

    private func sendHeld() {
        guard !held.isEmpty else { return }
        let bytes = held
        held = []
        socket.write(bytes)
    }
    /// Caps the kernel's send buffer (a socket only), for a long-lived stream to a reader that may stop.
    func limitKernelSendBuffer(to bytes: Int) { (socket as? StreamSocket)?.limitKernelSendBuffer(to: bytes) }
    var outputLimit: Int { socket.outputLimit }
    func reset() { socket.reset() }
    var isClosed: Bool { socket.isClosed }
    var peerDescription: String { socket.peerDescription }
    var peerHost: String? { socket.peerHost }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) { onEvent?(.data(bytes)) }
    func socketDidReadEOF(_ socket: any ByteStream) { tell(.endOfInput) }
    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { tell(.failed(error.description)) }

    func takeUntoldInputEnding() -> LegEvent? {
        defer { untoldInputEnding = nil }
        return untoldInputEnding
    }

    func socketDidDrain(_ socket: any ByteStream) { onEvent?(.drained) }

    /// Tells the owner how the input ended, or keeps it for the next owner when none listens.
    private func tell(_ ending: LegEvent) {
        if let onEvent { onEvent(ending) } else { untoldInputEnding = ending }
    }
}
