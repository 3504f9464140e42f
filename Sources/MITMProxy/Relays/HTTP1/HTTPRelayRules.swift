import MITMRules

/// What the HTTP/1 relay keeps for the QA rules: the decision for the request waiting to start, its delay,
/// the route its upstream takes, a file answer being streamed, and the breakpoints holding an exchange.
///
/// About 1.3 KB, kept out of line: a relay no rule has concerned (the common case) holds one nil reference, and a
/// relay at rest between requests gives its state back (`releaseAtRest`). Reading a field of a relay without state
/// gives its initial value; writing nil to one allocates nothing.
struct HTTPRelayRules {
    private final class State {
        var pending: RuleDecision?
        var exchange = RuledExchange(streams: false)
        var delayTimer: (any ClockTimer)?
        var route: UpstreamRoute?
        var sender: LocalFileSender?
        var filePump = PumpGate()
        var breakpoint: HTTPRelayBreakpoint?
        var heldResponse: HTTPRelayHeldResponse?

        init() {}

        init(copying other: State) {
            pending = other.pending
            exchange = other.exchange
            delayTimer = other.delayTimer
            route = other.route
            sender = other.sender
            filePump = other.filePump
            breakpoint = other.breakpoint
            heldResponse = other.heldResponse
        }

        var isAtRest: Bool {
            pending == nil && delayTimer == nil && route == nil && sender == nil && !filePump.isRunning
                && breakpoint == nil && heldResponse == nil
        }
    }

    private var state: State?

    /// Whether the state is allocated.
    var holdsState: Bool { state != nil }

    /// The state to write to, allocated on first use (and copied if this value was copied: value semantics).
    private mutating func writable() -> State {
        guard let current = state else {
            let created = State()
            state = created
            return created
        }
        if isKnownUniquelyReferenced(&state) { return current }
        let copy = State(copying: current)
        state = copy
        return copy
    }

    /// Writes `value` to `field`; nil to a relay without state allocates nothing.
    private mutating func write<Value>(_ value: Value?, to field: ReferenceWritableKeyPath<State, Value?>) {
        guard value != nil || state != nil else { return }
        writable()[keyPath: field] = value
    }

    /// Gives the state back when nothing is pending, held, timed, routed or streamed. The rules' machine of the last
    /// request is not kept: the next request head starts a new one.
    mutating func releaseAtRest() {
        if state?.isAtRest == true { state = nil }
    }

    /// The decision for the request head next in the queue, taken by `beginRequest`.
    var pending: RuleDecision? {
        get { state?.pending }
        set { write(newValue, to: \.pending) }
    }

    /// What the rules do to the request next in the queue: held by a delay (`delayTimer` runs), or let go.
    var exchange: RuledExchange {
        get { state?.exchange ?? RuledExchange(streams: false) }
        _modify { yield &writable().exchange }
    }

    var delayTimer: (any ClockTimer)? {
        get { state?.delayTimer }
        set { write(newValue, to: \.delayTimer) }
    }

    /// The route of the current upstream when it is not the interception's own (a mapped origin, or the origin
    /// dialled again after one), or the plain origin.
    var route: UpstreamRoute? {
        get { state?.route }
        set { write(newValue, to: \.route) }
    }

    /// A file answer being streamed to the client.
    var sender: LocalFileSender? {
        get { state?.sender }
        set { write(newValue, to: \.sender) }
    }

    /// Guards `pumpFileAnswer`, which a write re-enters when it reports `.drained` from inside it.
    var filePump: PumpGate {
        get { state?.filePump ?? PumpGate() }
        _modify { yield &writable().filePump }
    }

    /// The request next in the queue at a breakpoint (see `HTTPRelay+Breakpoints.swift`).
    var breakpoint: HTTPRelayBreakpoint? {
        get { state?.breakpoint }
        set { write(newValue, to: \.breakpoint) }
    }

    /// The first exchange's response held at a breakpoint (see `HTTPRelay+ResponseBreakpoints.swift`).
    var heldResponse: HTTPRelayHeldResponse? {
        get { state?.heldResponse }
        set { write(newValue, to: \.heldResponse) }
    }
}
