import MITMCore
import MITMIO
import MITMTLS

/// A leg with TLS over the socket: drives the handshake, then turns ciphertext
/// into plaintext events and plaintext writes into ciphertext. Its life is `life`'s.
final class TLSLeg: Leg, StreamSocketDelegate, BatchedWriter {
    let socket: any ByteStream
    let tls: TLSConnection
    var onEvent: ((LegEvent) -> Void)?
    /// Called once when the handshake ends.
    var onHandshake: ((TLSHandshakeOutcome) -> Void)?
    /// Called once, before the first plaintext is delivered (the verdict's "application data").
    var onFirstData: (() -> Void)?
    /// Called once when input ends after the handshake and before any plaintext: the alert that ended it
    /// (close_notify or fatal), and whether it was a reset.
    var onInputEnd: ((_ alert: TLSAlert?, _ reset: Bool) -> Void)?
    private(set) var life = TLSLegLife()
    private var paused = false
    private var untoldInputEnding: LegEvent?
    private var corked = false
    private var held: [UInt8] = []
    /// `held` is a writer's array taken as it came, perhaps shared with the writer: let go after encrypting, not kept
    /// for the next record.
    private var heldAdopted = false
    /// Plaintext held while corked, at most: one TLS record's worth.
    private static let corkLimit = 16_384
    /// Set when a TLS 1.3 client's first data came with its Finished: the session tickets written then wait for the
    /// first response and leave in the same send (one send, and one wake-up of the client, less per connection).
    private var ticketsAwaitResponse = false
    /// The records written during the read being delivered wait for its end, to leave in one send (`WriteBatch`).
    private var flushAwaited = false
    /// A listener was told that records waiting for the batch's end are buffered: it may wait for `.drained`.
    private var awaitedBytesReported = false

    private let writeBatch: WriteBatch

    init(socket: any ByteStream, tls: TLSConnection) {
        self.socket = socket
        self.tls = tls
        writeBatch = socket.loop.writeBatch
        socket.delegate = self
    }

    deinit { socket.detach(self) }

    /// Starts the handshake with bytes already read from the peer (a peeked ClientHello), then reads on.
    func startHandshake(initialBytes: [UInt8] = []) {
        if !initialBytes.isEmpty { tls.receive(initialBytes) }
        stepHandshake()
        if life.isHandshaking { socket.resumeReading() }
    }

    /// What the socket holds, and the records waiting for the end of the read being delivered.
    var bufferedOutputBytes: Int {
        guard flushAwaited, tls.pendingOutputCount > 0 else { return socket.bufferedOutputBytes }
        awaitedBytesReported = true
        return socket.bufferedOutputBytes + tls.pendingOutputCount
    }
    var outputLimit: Int { socket.outputLimit }
    var isClosed: Bool { socket.isClosed }
    var peerDescription: String { socket.peerDescription }
    var peerHost: String? { socket.peerHost }

    func write(_ bytes: [UInt8]) {
        // A first piece that fits is adopted, not copied: a body chunk of a whole record is the common case.
        if corked && held.isEmpty && bytes.count <= Self.corkLimit && !socket.isClosed {
            held = bytes
            heldAdopted = true
            return
        }
        bytes.withUnsafeBytes { write($0) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !socket.isClosed else { return }
        if corked && held.count + bytes.count <= Self.corkLimit && (!held.isEmpty || bytes.count < Self.corkLimit / 4) {
            // One allocation for the record, kept while the leg is busy: HTTP/2 frames come here one by one.
            if held.isEmpty { held.reserveCapacity(Self.corkLimit) }
            held.append(contentsOf: bytes)
            heldAdopted = false
            return
        }
        ticketsAwaitResponse = false
        encryptHeld()
        reportFailure(of: tls.write(bytes))
        if !corked { flushOutput() }
    }

    func cork() { corked = true }

    func uncork() {
        corked = false
        ticketsAwaitResponse = false
        guard !socket.isClosed else { return }
        encryptHeld()
        flushOutput()
    }

    private func encryptHeld() {
        guard !held.isEmpty else { return }
        let written = tls.write(held)
        if heldAdopted {
            held = []
            heldAdopted = false
        } else {
            held.removeAll(keepingCapacity: true)
        }
        // Reported once `held` is empty: whatever the failure's handlers write is not dropped with what was encrypted.
        reportFailure(of: written)
    }

    private func reportFailure(of write: Result<Int, TLSFailure>) {
        if case .failure(let failure) = write { onEvent?(.failed(failure.description)) }
    }

    func pauseReading() {
        paused = true
        socket.pauseReading()
    }

    func resumeReading() {
        paused = false
        guard !life.isHandshaking, !socket.isClosed else { return }
        socket.resumeReading()
        // Only input kept while paused needs decrypting now; what the socket still holds comes with its next read turn.
        // (A parked upstream resumes with nothing kept: without the check, each park cost an `SSL_read` that had nothing.)
        if tls.mayHaveInput { drainPlaintext() }
    }

    func finishWriting() {
        guard !socket.isClosed else { return }
        ticketsAwaitResponse = false
        encryptHeld()
        tls.shutdown()
        flushOutput(now: true)
        socket.shutdownWriteAfterFlush()
    }

    /// Closes after handing the socket what was written (a batch's records would otherwise be lost).
    func close() {
        flushOutput(now: true)
        socket.close()
    }

    /// Resets after handing the socket what was written (a fault after the headers sends the headers first).
    func reset() {
        flushOutput(now: true)
        socket.reset()
    }

    func releaseIdleMemory() {
        if held.isEmpty { held = [] }
        tls.releaseBuffers()
    }

    func compactIdleMemory() {
        held = []
        tls.compactBuffers()
    }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        tls.lendInput(bytes) {
            if life.isHandshaking { stepHandshake() } else { drainPlaintext() }
        }
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        perform(life.receive(.inputEnded(.finished)), listenerHears: .endOfInput)
    }

    func socket(_ socket: any ByteStream, didFail error: SystemCallError) {
        perform(life.receive(.inputEnded(.reset)), listenerHears: .failed(error.description))
    }

    func socketDidDrain(_ socket: any ByteStream) {
        if !life.isHandshaking { onEvent?(.drained) }
    }

    private func stepHandshake() {
        let step = tls.handshake()
        if case .complete = step, tls.isTLS13Server, tls.mayHaveInput { ticketsAwaitResponse = true }
        flushOutput()
        if case .complete = step {
            let socket = socket
            tls.directOutput = { [socket, writeBatch] records in writeBatch.isOpen ? 0 : socket.sendNow(records) }
        }
        perform(life.receive(.handshakeStepped(step)))
    }

    func takeUntoldInputEnding() -> LegEvent? {
        defer { untoldInputEnding = nil }
        return untoldInputEnding
    }

    /// Tells the owner how the input ended, or keeps it for the next owner when none listens.
    private func tell(_ ending: LegEvent) {
        if let onEvent { onEvent(ending) } else { untoldInputEnding = ending }
    }

    /// Performs what `life` decided; `listenerHears` is what an input end tells `onEvent`.
    private func perform(_ action: TLSLegLife.Action, listenerHears ending: LegEvent? = nil) {
        switch action {
        case .none, .deliver:
            return
        case .reportHandshake(let outcome):
            let callback = onHandshake
            onHandshake = nil
            callback?(outcome)
            if outcome == .complete && !socket.isClosed && !paused { drainPlaintext() }
        case .reportFirstData:
            let first = onFirstData
            onFirstData = nil
            onInputEnd = nil
            first?()
        case .reportInputEnd(let alert, let reset):
            let callback = onInputEnd
            onInputEnd = nil
            onFirstData = nil
            callback?(alert, reset)
            if let ending { tell(ending) }
        case .passInputEnd:
            onInputEnd = nil
            onFirstData = nil
            if let ending { tell(ending) }
        case .impossible(let event):
            onEvent?(.failed("TLS leg: \(event.rawValue)"))
        }
    }

    private func drainPlaintext() {
        let scratch = socket.loop.plaintextScratch
        while !paused && !socket.isClosed && life.readsPlaintext {
            switch tls.read(into: scratch) {
            case .data(let count):
                let delivery = life.receive(.plaintext)
                guard delivery == .deliver || delivery == .reportFirstData else {
                    perform(delivery)
                    return
                }
                perform(delivery)
                onEvent?(.data(UnsafeRawBufferPointer(rebasing: scratch[0..<count])))
                if !tls.mayHaveInput {
                    flushOutput()
                    return
                }
            case .needsInput:
                flushOutput()
                return
            case .closed:
                ticketsAwaitResponse = false
                flushOutput()
                perform(life.receive(.inputEnded(.closeNotify)), listenerHears: .endOfInput)
                return
            case .failed(let failure):
                ticketsAwaitResponse = false
                flushOutput()
                perform(
                    life.receive(.inputEnded(.failed(alert: failure.receivedAlert))),
                    listenerHears: .failed(failure.description))
                return
            }
        }
    }

    /// Records wait to be sent, and may leave now (a TLS 1.3 server's tickets may wait for the first response).
    private var hasOutputToSend: Bool { !ticketsAwaitResponse && tls.pendingOutputCount > 0 && !socket.isClosed }

    private func flushOutput(now: Bool = false) {
        guard hasOutputToSend else { return }
        if !now && (flushAwaited || writeBatch.flushAtEnd(self)) {
            flushAwaited = true
            return
        }
        socket.write(tls.takeOutput())
    }

    /// Sends the batch's records from their buffer in one call; what the kernel does not take waits in the socket, which
    /// reports `.drained` later. A listener that was told of these bytes hears `.drained` when they all went at once.
    func flushBatchedWrites() {
        flushAwaited = false
        let reported = awaitedBytesReported
        awaitedBytesReported = false
        guard hasOutputToSend else { return }
        let socket = socket
        tls.sendOutput { socket.sendNow($0) }
        if tls.pendingOutputCount > 0 {
            socket.write(tls.takeOutput())
        } else if reported && !life.isHandshaking {
            onEvent?(.drained)
        }
    }
}
