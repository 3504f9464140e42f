/// A connected byte stream confined to an event loop: a TCP `StreamSocket`, or in tests one end of an
/// in-memory pair, so that everything above the I/O layer runs without sockets.
public protocol ByteStream: AnyObject {
    /// The loop that owns the stream; every method must be called on its queue.
    var loop: EventLoop { get }
    /// Receives reads, the peer's end, failures and drains, always on `loop`.
    var delegate: StreamSocketDelegate? { get set }
    /// Bytes queued and not yet taken by the peer (the kernel, for a socket).
    var bufferedOutputBytes: Int { get }
    /// Whether `close()` was called.
    var isClosed: Bool { get }
    /// Whether reads are delivered.
    var isReading: Bool { get }
    /// The peer as `host:port`, for log lines.
    var peerDescription: String { get }
    /// The peer's IP address, when known.
    var peerHost: String? { get }
    /// Queues bytes toward the peer.
    func write(_ bytes: [UInt8])
    /// Sends what the peer takes now of bytes lent for the call, when nothing is queued before them; returns how
    /// many it took (the caller queues the rest with `write`). 0 when something is queued, or on an error, which the
    /// queued write then meets and reports.
    func sendNow(_ bytes: UnsafeRawBufferPointer) -> Int
    /// Ends output (FIN) once everything queued is written.
    func shutdownWriteAfterFlush()
    /// Starts or resumes delivering reads; data that arrived meanwhile is delivered in a later loop turn.
    func resumeReading()
    /// Stops delivering reads (backpressure).
    func pauseReading()
    /// Closes at once.
    func close()
    /// The most bytes the stream wants queued before its writer pauses, when that is fewer than the writer's
    /// own high-water mark (a throttled link holds little); `Int.max` for a socket.
    var outputLimit: Int { get }
    /// Closes at once with a TCP reset (RST) instead of a FIN, as a crashed server would.
    func reset()
    /// Stops reporting to `delegate` if it is the current delegate. Every delegate calls it in its deinit: a stream
    /// may hold its delegate `unowned` (`StreamSocket` does) and outlive it.
    func detach(_ delegate: AnyObject)
}

extension ByteStream {
    public func sendNow(_ bytes: UnsafeRawBufferPointer) -> Int { 0 }
    public var outputLimit: Int { .max }
    public func reset() { close() }
    /// For a stream that holds its delegate `weak`.
    public func detach(_ delegate: AnyObject) {}
}
