import MITMIO
import Synchronization

/// Counts deliveries queued on the loop by memory streams, so a test can wait until nothing moves.
final class MemoryNetwork: Sendable {
    let loop: EventLoop
    private let inFlight = Atomic<Int>(0)
    private let pairs = Mutex<[(MemoryStream, MemoryStream)]>([])

    init(loop: EventLoop) { self.loop = loop }

    /// Runs `work` on the loop in a later turn, as a socket's readiness would.
    func later(_ work: @escaping @Sendable () -> Void) {
        inFlight.add(1, ordering: .relaxed)
        loop.execute { [self] in
            work()
            inFlight.subtract(1, ordering: .relaxed)
        }
    }

    /// Blocks until every delivery queued so far, and those they queued in turn, has run, and the work they handed
    /// the loop (`execute`, which a `sync` runs first) too: two quiet passes in a row.
    func settle() {
        var quietPasses = 0
        repeat {
            loop.sync {}
            quietPasses = inFlight.load(ordering: .relaxed) > 0 ? 0 : quietPasses + 1
        } while quietPasses < 2
    }

    /// Two connected streams on the loop: what one writes, the other reads.
    func pair(_ first: String, _ second: String) -> (MemoryStream, MemoryStream) {
        let a = MemoryStream(network: self, name: first)
        let b = MemoryStream(network: self, name: second)
        a.peer = b
        b.peer = a
        pairs.withLock { $0.append((a, b)) }
        return (a, b)
    }

    /// Unlinks every pair's two ends (each holds the other), so the streams, and the loop with its thread, can go.
    /// On the loop.
    func disconnectAll() {
        for (a, b) in pairs.withLock({ pairs in
            defer { pairs.removeAll() }
            return pairs
        }) {
            a.peer = nil
            b.peer = nil
        }
    }
}

/// One end of an in-memory stream pair: a `ByteStream` with socket semantics (reads only while reading is
/// on, data kept meanwhile, FIN after the data, deliveries in later loop turns) and no descriptor.
// @unchecked Sendable: confined to its network's loop, like a socket.
final class MemoryStream: ByteStream, @unchecked Sendable {
    let network: MemoryNetwork
    let name: String
    var loop: EventLoop { network.loop }
    weak var delegate: StreamSocketDelegate?
    var peer: MemoryStream?
    private(set) var isClosed = false
    private(set) var isReading = false
    private var inbox: [UInt8] = []
    private var endReceived = false
    private var endDelivered = false
    private var deliveryQueued = false
    /// Whether this end sent FIN (or closed).
    private(set) var sentEnd = false

    init(network: MemoryNetwork, name: String) {
        self.network = network
        self.name = name
    }

    var bufferedOutputBytes: Int { 0 }
    var peerDescription: String { peer?.name ?? "gone" }
    var peerHost: String? { remoteHost }
    /// The address `peerHost` reports: where the other end seems to connect from.
    var remoteHost = "127.0.0.1"

    func write(_ bytes: [UInt8]) {
        guard !isClosed, !sentEnd, !bytes.isEmpty, let peer else { return }
        peer.arrive(bytes)
    }

    func shutdownWriteAfterFlush() {
        guard !isClosed, !sentEnd else { return }
        sentEnd = true
        peer?.arriveEnd()
    }

    func resumeReading() {
        guard !isClosed else { return }
        isReading = true
        queueDelivery()
    }

    func pauseReading() { isReading = false }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        isReading = false
        if !sentEnd {
            sentEnd = true
            peer?.arriveEnd()
        }
    }

    private func arrive(_ bytes: [UInt8]) {
        inbox += bytes
        queueDelivery()
    }

    private func arriveEnd() {
        endReceived = true
        queueDelivery()
    }

    private func queueDelivery() {
        guard !deliveryQueued else { return }
        deliveryQueued = true
        network.later { [self] in
            deliveryQueued = false
            deliver()
        }
    }

    private func deliver() {
        guard isReading, !isClosed else { return }
        if !inbox.isEmpty {
            let bytes = inbox
            inbox = []
            bytes.withUnsafeBytes { delegate?.socket(self, didRead: $0) }
        }
        if endReceived && !endDelivered && inbox.isEmpty && isReading && !isClosed {
            endDelivered = true
            isReading = false
            delegate?.socketDidReadEOF(self)
        }
    }
}

/// The test's side of a memory stream: records what arrives, writes what the test says.
final class MemoryPeer: StreamSocketDelegate, @unchecked Sendable {
    let stream: MemoryStream
    private(set) var received: [UInt8] = []
    private(set) var ended = false

    init(_ stream: MemoryStream) {
        self.stream = stream
        stream.delegate = self
        stream.resumeReading()
    }

    var text: String { String(decoding: received, as: UTF8.self) }

    func send(_ text: String) { stream.write(Array(text.utf8)) }

    func takeText() -> String {
        defer { received = [] }
        return text
    }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) { received += bytes }
    func socketDidReadEOF(_ socket: any ByteStream) { ended = true }
    func socket(_ socket: any ByteStream, didFail error: SystemCallError) { ended = true }
    func socketDidDrain(_ socket: any ByteStream) {}
}
