import MITMCore
import MITMIO

/// A client connection seen through a simulated network (`--throttle`): what the proxy writes leaves at
/// the down bandwidth, what the client sent arrives at the up bandwidth, each after half the round-trip
/// latency, with loss as stalls. It sits below the legs, so HTTP/1, HTTP/2, raw and passed-through
/// tunnels (and the TLS handshake itself) all cross the same link.
///
/// Backpressure, not buffering: toward the client it holds at most its lane's limit (about the
/// bandwidth over the latency) and reports it as `outputLimit`, so relays stop reading the upstream
/// until `socketDidDrain`; from the client it holds at most that much and stops reading the socket, so
/// the client's own TCP window closes. Confined to its loop; the lanes' timer runs there.
// @unchecked Sendable: confined to its loop's queue; its timer fires there.
final class ThrottledStream: ByteStream, StreamSocketDelegate, @unchecked Sendable {
    private let inner: any ByteStream
    private let clock: ProxyClock
    private var link: ThrottledLink
    weak var delegate: StreamSocketDelegate?
    private var pumpGate = PumpGate()
    private var timer: (any ClockTimer)?
    private var timerAt: UInt64 = .max
    private var wakeQueued = false

    /// The rule that set the conditions.
    let rule: String

    /// `inner` behind `conditions` (set by `rule`); takes over as its delegate.
    init(wrapping inner: any ByteStream, conditions: NetworkConditions, rule: String, clock: ProxyClock) {
        self.inner = inner
        self.rule = rule
        self.clock = clock
        link = ThrottledLink(
            down: conditions.downLane(), up: conditions.upLane(), consumerReads: inner.isReading,
            random: Self.nextRandom)
        inner.delegate = self
    }

    deinit { inner.detach(self) }

    var loop: EventLoop { inner.loop }
    var bufferedOutputBytes: Int { link.down.queuedBytes + inner.bufferedOutputBytes }
    var outputLimit: Int { link.down.limit }
    var isClosed: Bool { link.isClosed || inner.isClosed }
    var isReading: Bool { link.consumer == .reads && !isClosed }
    var peerDescription: String { inner.peerDescription }
    var peerHost: String? { inner.peerHost }

    func write(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        perform(link.receive(.proxyWrote(bytes, now: clock.now())))
    }

    func shutdownWriteAfterFlush() {
        guard !isClosed else { return }
        perform(link.receive(.proxyEndsWriting))
    }

    func resumeReading() {
        guard !isClosed else { return }
        perform(link.receive(.consumerResumes))
    }

    func pauseReading() {
        perform(link.receive(.consumerPauses))
    }

    func close() {
        guard !link.isClosed else { return }
        closeLink()
        inner.close()
    }

    func reset() {
        closeLink()
        inner.reset()
    }

    private func closeLink() {
        _ = link.receive(.closed)
        timer?.cancel()
        timer = nil
    }

    // MARK: the socket below

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        perform(link.receive(.clientSent(Array(bytes), now: clock.now())))
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        perform(link.receive(.clientEnded(now: clock.now())))
    }

    func socket(_ socket: any ByteStream, didFail error: SystemCallError) {
        // A reset ends the connection at once, as it would on a real link: what is in flight is lost.
        delegate?.socket(self, didFail: error)
    }

    func socketDidDrain(_ socket: any ByteStream) {
        perform(link.receive(.socketDrained))
    }

    // MARK: performing the link's decisions

    private func perform(_ actions: [ThrottledLink.Action]) {
        for action in actions {
            switch action {
            case .writeToSocket(let bytes): inner.write(bytes)
            case .shutDownSocketWriting: inner.shutdownWriteAfterFlush()
            case .pauseSocket: inner.pauseReading()
            case .resumeSocket: inner.resumeReading()
            case .deliver(let bytes): bytes.withUnsafeBytes { delegate?.socket(self, didRead: $0) }
            case .deliverEnd: delegate?.socketDidReadEOF(self)
            case .signalDrained: delegate?.socketDidDrain(self)
            case .pump: pump()
            case .pumpSoon: queueWake()
            }
        }
    }

    /// One round after another until nothing more is due; a round entered again from a delegate call is run by the
    /// round in progress.
    private func pump() {
        guard pumpGate.enter() else { return }
        defer { pumpGate.leave() }
        repeat {
            guard !isClosed else { return }
            let now = clock.now()
            perform(link.receive(.sendDue(now: now)))
            perform(link.receive(.outputBuffered(socketBytes: inner.bufferedOutputBytes)))
            perform(link.receive(.receiveDue(now: now)))
            guard !isClosed else { return }
            perform(link.receive(.deliveryDone(now: now)))
        } while pumpGate.takeAgain()
        scheduleWake()
    }

    private static func nextRandom() -> Double {
        var generator = SystemRandomNumberGenerator()
        return Double(generator.next() >> 11) / Double(UInt64(1) << 53)
    }

    /// Sets the timer for the sooner lane; one timer at a time.
    private func scheduleWake() {
        guard !isClosed, let wake = link.nextWake(now: clock.now()) else { return }
        guard wake < timerAt || timer == nil else { return }
        timer?.cancel()
        timerAt = wake
        timer = clock.schedule(at: wake, on: loop) { [weak self] in
            guard let stream = self else { return }
            stream.timer = nil
            stream.timerAt = .max
            stream.pump()
        }
    }

    private func queueWake() {
        guard !wakeQueued else { return }
        wakeQueued = true
        loop.execute { [weak self] in
            guard let stream = self else { return }
            stream.wakeQueued = false
            stream.pump()
        }
    }
}
