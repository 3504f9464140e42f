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
    private var down: ThrottleLane
    private var up: ThrottleLane
    private var random = SystemRandomNumberGenerator()
    weak var delegate: StreamSocketDelegate?
    private var consumerReads = false
    private var innerPausedForLane = false
    private var shutdownWhenEmpty = false
    private var endDelivered = false
    private var owesDrain = false
    private var pumpGate = PumpGate()
    private var timer: (any ClockTimer)?
    private var timerAt: UInt64 = .max
    private var wakeQueued = false
    private var closedHere = false

    /// The rule that set the conditions.
    let rule: String

    /// `inner` behind `conditions` (set by `rule`); takes over as its delegate.
    init(wrapping inner: any ByteStream, conditions: NetworkConditions, rule: String, clock: ProxyClock) {
        self.inner = inner
        self.rule = rule
        self.clock = clock
        down = conditions.downLane()
        up = conditions.upLane()
        consumerReads = inner.isReading
        inner.delegate = self
    }

    deinit { inner.detach(self) }

    var loop: EventLoop { inner.loop }
    var bufferedOutputBytes: Int { down.queuedBytes + inner.bufferedOutputBytes }
    var outputLimit: Int { down.limit }
    var isClosed: Bool { closedHere || inner.isClosed }
    var isReading: Bool { consumerReads && !isClosed }
    var peerDescription: String { inner.peerDescription }
    var peerHost: String? { inner.peerHost }

    func write(_ bytes: [UInt8]) {
        guard !isClosed, !bytes.isEmpty else { return }
        down.enqueue(bytes, now: clock.now())
        owesDrain = true
        pump()
    }

    func shutdownWriteAfterFlush() {
        guard !isClosed else { return }
        if down.isEmpty {
            inner.shutdownWriteAfterFlush()
        } else {
            shutdownWhenEmpty = true
        }
    }

    func resumeReading() {
        guard !isClosed, !consumerReads else { return }
        consumerReads = true
        if !up.isFull && !innerPausedForLane { inner.resumeReading() }
        // Bytes already through the link are delivered in a later turn, as a socket does.
        queueWake()
    }

    func pauseReading() {
        consumerReads = false
        inner.pauseReading()
    }

    func close() {
        guard !closedHere else { return }
        closedHere = true
        timer?.cancel()
        timer = nil
        inner.close()
    }

    func reset() {
        closedHere = true
        timer?.cancel()
        timer = nil
        inner.reset()
    }

    // MARK: the socket below

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        up.enqueue(Array(bytes), now: clock.now())
        if up.isFull {
            innerPausedForLane = true
            inner.pauseReading()
        }
        pump()
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        up.markEnd(now: clock.now())
        pump()
    }

    func socket(_ socket: any ByteStream, didFail error: SystemCallError) {
        // A reset ends the connection at once, as it would on a real link: what is in flight is lost.
        delegate?.socket(self, didFail: error)
    }

    func socketDidDrain(_ socket: any ByteStream) {
        if down.isEmpty { signalDrained() }
    }

    // MARK: moving bytes across the link

    private func pump() {
        guard pumpGate.enter() else { return }
        defer { pumpGate.leave() }
        repeat {
            guard !isClosed else { return }
            let now = clock.now()
            let outgoing = down.release(now: now, random: nextRandom)
            if !outgoing.isEmpty { inner.write(outgoing) }
            if down.isEmpty && shutdownWhenEmpty {
                shutdownWhenEmpty = false
                inner.shutdownWriteAfterFlush()
            }
            if owesDrain && bufferedOutputBytes <= down.limit / 2 { signalDrained() }
            if consumerReads {
                let incoming = up.release(now: now, random: nextRandom)
                if !incoming.isEmpty {
                    incoming.withUnsafeBytes { delegate?.socket(self, didRead: $0) }
                }
                if innerPausedForLane && !up.isFull && !isClosed {
                    innerPausedForLane = false
                    if consumerReads { inner.resumeReading() }
                }
                if up.endIsDue(now: now) && !endDelivered && consumerReads && !isClosed {
                    endDelivered = true
                    delegate?.socketDidReadEOF(self)
                }
            }
        } while pumpGate.takeAgain()
        scheduleWake()
    }

    private func signalDrained() {
        owesDrain = false
        delegate?.socketDidDrain(self)
    }

    private func nextRandom() -> Double {
        Double(random.next() >> 11) / Double(UInt64(1) << 53)
    }

    /// Sets the timer for the sooner lane; one timer at a time.
    private func scheduleWake() {
        guard !isClosed else { return }
        let now = clock.now()
        let wakes = [down.nextWake(now: now), consumerReads ? up.nextWake(now: now) : nil].compactMap { $0 }
        guard let wake = wakes.min() else { return }
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
