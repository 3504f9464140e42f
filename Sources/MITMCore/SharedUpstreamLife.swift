/// The life of an upstream HTTP/2 connection that client connections share: whether it takes new streams,
/// when it idles, when it goes. Events in, actions out; the I/O layer performs the actions.
package struct SharedUpstreamLife: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        /// Takes new streams (and new client connections).
        case open
        /// The upstream said GOAWAY: the streams it accepted finish, new ones go elsewhere.
        case draining
        /// Gone.
        case closed
    }

    package enum Event: Sendable, Equatable {
        /// A client connection started using it.
        case attached
        /// A client connection stopped using it.
        case detached
        /// A stream was opened on it.
        case streamOpened
        /// One of its streams closed.
        case streamClosed
        /// The upstream sent GOAWAY.
        case goAwayReceived
        /// The connection broke (closed, reset, protocol error).
        case broke
        /// It stayed unused for the pool's idle time.
        case idleTimeout
        /// The proxy stops.
        case stopping
    }

    package enum Action: Sendable, Equatable {
        /// Start counting the idle time.
        case scheduleIdleTimer
        case cancelIdleTimer
        /// No later client connection may take it.
        case leavePool
        /// Say goodbye to the upstream (GOAWAY).
        case sendGoAway
        /// Close the connection.
        case close
    }

    package private(set) var state = State.open
    /// Client connections using it.
    package private(set) var users = 0
    /// Streams open on it.
    package private(set) var openStreams = 0

    /// A connection that has just been made (one user attaches next).
    package init() {}

    /// Whether a client connection may start using it, given the upstream's SETTINGS_MAX_CONCURRENT_STREAMS.
    package func canTakeMore(peerMaxConcurrentStreams: UInt32) -> Bool {
        state == .open && openStreams < Int(peerMaxConcurrentStreams)
    }

    /// Takes `event`; returns what to do.
    package mutating func receive(_ event: Event) -> [Action] {
        guard state != .closed else { return [] }
        switch event {
        case .attached:
            users += 1
            return users == 1 ? [.cancelIdleTimer] : []
        case .detached:
            users = max(0, users - 1)
            guard users == 0 else { return [] }
            if state == .draining { return close() }
            return [.scheduleIdleTimer]
        case .streamOpened:
            openStreams += 1
            return []
        case .streamClosed:
            openStreams = max(0, openStreams - 1)
            return state == .draining && openStreams == 0 ? close() : []
        case .goAwayReceived:
            guard state == .open else { return [] }
            state = .draining
            return openStreams == 0 && users == 0 ? [.leavePool] + close() : [.leavePool]
        case .broke:
            state = .closed
            return [.leavePool, .close]
        case .idleTimeout:
            guard users == 0 else { return [] }
            state = .closed
            return [.leavePool, .sendGoAway, .close]
        case .stopping:
            state = .closed
            return [.leavePool, .sendGoAway, .close]
        }
    }

    private mutating func close() -> [Action] {
        state = .closed
        return [.sendGoAway, .close]
    }
}
