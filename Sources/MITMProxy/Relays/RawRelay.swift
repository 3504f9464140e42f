/// Copies bytes both ways between two legs until both directions end: a CONNECT tunnel that is not
/// intercepted, or a connection after `101 Switching Protocols`. Slow readers pause the other side.
final class RawRelay {
    private let client: Leg
    private let upstream: Leg
    private var life = RawRelayLife()
    private(set) var bytesUp = 0
    private(set) var bytesDown = 0
    /// The connection that owns the relay.
    unowned var owner: RelayOwner?
    /// Reads the WebSocket messages in the bytes, when the relay carries a WebSocket.
    let tap: WebSocketTap?
    private static let highWater = 512 * 1024

    init(client: Leg, upstream: Leg, tap: WebSocketTap? = nil) {
        self.client = client
        self.upstream = upstream
        self.tap = tap
    }

    /// Starts relaying, first sending bytes each side already received for the other.
    func start(initialUp: [UInt8] = [], initialDown: [UInt8] = []) {
        client.onEvent = { [unowned self] event in self.handle(event, from: client, to: upstream, up: true) }
        upstream.onEvent = { [unowned self] event in self.handle(event, from: upstream, to: client, up: false) }
        if !initialUp.isEmpty { forward(initialUp, to: upstream, from: client, up: true) }
        if !initialDown.isEmpty { forward(initialDown, to: client, from: upstream, up: false) }
        client.resumeReading()
        upstream.resumeReading()
        if let ending = client.takeUntoldInputEnding() { handle(ending, from: client, to: upstream, up: true) }
        if let ending = upstream.takeUntoldInputEnding() { handle(ending, from: upstream, to: client, up: false) }
    }

    /// Closes both legs.
    func close(reason: String) {
        perform(life.receive(.close(reason: reason)))
    }

    private func handle(_ event: LegEvent, from source: Leg, to destination: Leg, up: Bool) {
        let side: RawRelayLife.Side = up ? .client : .upstream
        switch event {
        case .data(let bytes):
            forward(Array(bytes), to: destination, from: source, up: up)
        case .endOfInput:
            perform(life.receive(.inputEnded(side)))
        case .failed(let reason):
            perform(life.receive(.failed(side, reason: reason)))
        case .drained:
            perform(life.receive(.drained(side)))
        }
    }

    private func perform(_ actions: [RawRelayLife.Action]) {
        for action in actions {
            switch action {
            case .passEnd(let side):
                tap?.inputEnded(fromClient: side == .client)
                leg(side.other).finishWriting()
            case .resumeReading(let side):
                leg(side).resumeReading()
            case .closeIfFlushed:
                if client.bufferedOutputBytes == 0 && upstream.bufferedOutputBytes == 0 {
                    close(reason: "both sides closed")
                }
            case .close(let reason):
                client.onEvent = nil
                upstream.onEvent = nil
                client.close()
                upstream.close()
                tap?.finish(reason: reason)
                let owner = owner
                self.owner = nil
                owner?.relayClosed(reason: reason)
            }
        }
    }

    private func leg(_ side: RawRelayLife.Side) -> Leg { side == .client ? client : upstream }

    private func forward(_ bytes: [UInt8], to destination: Leg, from source: Leg, up: Bool) {
        if up { bytesUp += bytes.count } else { bytesDown += bytes.count }
        owner?.relayActivity(headDeadline: nil)
        tap?.observe(bytes, fromClient: up)
        destination.write(bytes)
        if destination.outputRoom(below: Self.highWater) < 0 { source.pauseReading() }
    }
}
