import MITMCore

/// The decisions of a simulated network link (`--throttle`) between the proxy and one client: what crosses each lane
/// when, when the socket below stops or resumes reading, and what the consumer above is owed (bytes, the end of input,
/// a drain). Events in, actions out; `ThrottledStream` performs the actions on its socket and its delegate.
///
/// A round of the link is four events, because performing an action can change what the next step decides (a drain
/// lets the consumer write, a delivery lets it pause or close): `sendDue`, `outputBuffered` (once the released bytes
/// are written), `receiveDue`, `deliveryDone`.
struct ThrottledLink {
    /// Toward the client.
    enum Outbound: Equatable {
        case open
        /// The proxy ended its side: the socket's writing is shut once the lane has let everything through.
        case shutdownOwed
        case shutDown
    }

    /// From the client.
    enum Inbound: Equatable {
        case flowing
        /// The lane is full: the socket does not read until the lane lets bytes through, so the client's TCP window
        /// closes instead of the link buffering.
        case heldForLane
        /// The client's end of input was delivered: nothing more comes.
        case ended
    }

    /// Whether the consumer above (a TLS or plain leg) reads.
    enum Consumer: Equatable {
        case reads
        case paused
    }

    enum Event {
        case proxyWrote([UInt8], now: UInt64)
        case proxyEndsWriting
        case consumerResumes
        case consumerPauses
        case clientSent([UInt8], now: UInt64)
        case clientEnded(now: UInt64)
        /// The socket below wrote out everything it held.
        case socketDrained
        /// The lanes are due for a round at `now`: release what the link toward the client lets through.
        case sendDue(now: UInt64)
        /// After `sendDue`'s bytes went to the socket: it holds `socketBytes` unsent.
        case outputBuffered(socketBytes: Int)
        /// Release what the link from the client lets through.
        case receiveDue(now: UInt64)
        /// After `receiveDue`'s bytes were delivered.
        case deliveryDone(now: UInt64)
        case closed
    }

    enum Action: Equatable {
        case writeToSocket([UInt8])
        case shutDownSocketWriting
        case pauseSocket
        case resumeSocket
        case deliver([UInt8])
        case deliverEnd
        case signalDrained
        /// Run a round now.
        case pump
        /// Run a round in a later turn of the loop (bytes already through the link arrive later, as from a socket).
        case pumpSoon
    }

    private(set) var down: ThrottleLane
    private(set) var up: ThrottleLane
    private(set) var outbound = Outbound.open
    private(set) var inbound = Inbound.flowing
    private(set) var consumer: Consumer
    /// A write made the link hold bytes toward the client: the consumer is told when it can write again.
    private(set) var drainOwed = false
    private(set) var isClosed = false
    private var random: () -> Double

    /// A link with these lanes, under a consumer that `reads` already or not; `random` decides losses.
    init(down: ThrottleLane, up: ThrottleLane, consumerReads: Bool, random: @escaping () -> Double) {
        self.down = down
        self.up = up
        consumer = consumerReads ? .reads : .paused
        self.random = random
    }

    /// When the link next has something to release; nil when nothing waits.
    func nextWake(now: UInt64) -> UInt64? {
        guard !isClosed else { return nil }
        // Once the client's end was delivered nothing more comes from it (its lane would keep naming that end).
        let wakes = [down.nextWake(now: now), consumer == .reads && inbound != .ended ? up.nextWake(now: now) : nil]
        return wakes.compactMap { $0 }.min()
    }

    mutating func receive(_ event: Event) -> [Action] {
        if isClosed { return [] }
        switch event {
        case .proxyWrote(let bytes, let now):
            guard !bytes.isEmpty else { return [] }
            down.enqueue(bytes, now: now)
            drainOwed = true
            return [.pump]
        case .proxyEndsWriting:
            guard outbound == .open else { return [] }
            guard down.isEmpty else {
                outbound = .shutdownOwed
                return []
            }
            outbound = .shutDown
            return [.shutDownSocketWriting]
        case .consumerResumes:
            guard consumer == .paused else { return [] }
            consumer = .reads
            return (up.isFull || inbound == .heldForLane ? [] : [.resumeSocket]) + [.pumpSoon]
        case .consumerPauses:
            consumer = .paused
            return [.pauseSocket]
        case .clientSent(let bytes, let now):
            up.enqueue(bytes, now: now)
            guard up.isFull, inbound == .flowing else { return [.pump] }
            inbound = .heldForLane
            return [.pauseSocket, .pump]
        case .clientEnded(let now):
            up.markEnd(now: now)
            return [.pump]
        case .socketDrained:
            guard down.isEmpty else { return [] }
            drainOwed = false
            return [.signalDrained]
        case .sendDue(let now):
            let outgoing = down.release(now: now, random: random)
            var actions: [Action] = outgoing.isEmpty ? [] : [.writeToSocket(outgoing)]
            if down.isEmpty && outbound == .shutdownOwed {
                outbound = .shutDown
                actions.append(.shutDownSocketWriting)
            }
            return actions
        case .outputBuffered(let socketBytes):
            guard drainOwed, down.queuedBytes + socketBytes <= down.limit / 2 else { return [] }
            drainOwed = false
            return [.signalDrained]
        case .receiveDue(let now):
            guard consumer == .reads else { return [] }
            let incoming = up.release(now: now, random: random)
            return incoming.isEmpty ? [] : [.deliver(incoming)]
        case .deliveryDone(let now):
            guard consumer == .reads else { return [] }
            var actions: [Action] = []
            if inbound == .heldForLane && !up.isFull {
                inbound = .flowing
                actions.append(.resumeSocket)
            }
            if inbound != .ended && up.endIsDue(now: now) {
                inbound = .ended
                actions.append(.deliverEnd)
            }
            return actions
        case .closed:
            isClosed = true
            return []
        }
    }
}
