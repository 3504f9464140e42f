import MITMRules

/// What the HTTP/1 relay keeps for the QA rules: the decision for the request waiting to start, its delay,
/// the route its upstream takes, a file answer being streamed, and the breakpoints holding an exchange.
///
/// About 1.3 KB, kept out of line: a relay no rule has concerned (the common case) holds one nil reference, and a
/// relay at rest between requests gives its state back (`releaseAtRest`). Reading a field of a relay without state
/// gives its initial value; writing nil to one allocates nothing.
struct HTTPRelayRules {
    private struct Fields {
        var pending: RuleDecision?
        var exchange = RuledExchange(streams: false)
        var delayTimer: (any ClockTimer)?
        var route: UpstreamRoute?
        var sender: LocalFileSender?
        var filePump = PumpGate()
        var breakpoint: HTTPRelayBreakpoint?
        var heldResponse: HTTPRelayHeldResponse?

        var isAtRest: Bool {
            pending == nil && delayTimer == nil && route == nil && sender == nil && !filePump.isRunning
                && breakpoint == nil && heldResponse == nil
        }
    }

    private final class State {
        var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var state: State?

    /// Whether the state is allocated.
    var holdsState: Bool { state != nil }

    /// The state to write to, allocated on first use (and copied if this value was copied: value semantics).
    private mutating func writable() -> State {
        if let current = state, isKnownUniquelyReferenced(&state) { return current }
        let created = State(state?.fields ?? Fields())
        state = created
        return created
    }

    /// Writes `value` to `field`; nil to a relay without state allocates nothing.
    private mutating func write<Value>(_ value: Value?, to field: ReferenceWritableKeyPath<State, Value?>) {
        guard value != nil || state != nil else { return }
        writable()[keyPath: field] = value
    }

    /// Gives the state back when nothing is pending, held, timed, routed or streamed. The rules' machine of the last
    /// request is not kept: the next request head starts a new one.
    mutating func releaseAtRest() {
        if state?.fields.isAtRest == true { state = nil }
    }

    /// The decision for the request head next in the queue, taken by `beginRequest`.
    var pending: RuleDecision? {
        get { state?.fields.pending }
        set { write(newValue, to: \.fields.pending) }
    }

    /// What the rules do to the request next in the queue: held by a delay (`delayTimer` runs), or let go.
    var exchange: RuledExchange {
        get { state?.fields.exchange ?? RuledExchange(streams: false) }
        _modify { yield &writable().fields.exchange }
    }

    var delayTimer: (any ClockTimer)? {
        get { state?.fields.delayTimer }
        set { write(newValue, to: \.fields.delayTimer) }
    }

    /// The route of the current upstream when it is not the interception's own (a mapped origin, or the origin
    /// dialled again after one), or the plain origin.
    var route: UpstreamRoute? {
        get { state?.fields.route }
        set { write(newValue, to: \.fields.route) }
    }

    /// A file answer being streamed to the client.
    var sender: LocalFileSender? {
        get { state?.fields.sender }
        set { write(newValue, to: \.fields.sender) }
    }

    /// Guards `pumpFileAnswer`, which a write re-enters when it reports `.drained` from inside it.
    var filePump: PumpGate {
        get { state?.fields.filePump ?? PumpGate() }
        _modify { yield &writable().fields.filePump }
    }

    /// The request next in the queue at a breakpoint (see `HTTPRelay+Breakpoints.swift`).
    var breakpoint: HTTPRelayBreakpoint? {
        get { state?.fields.breakpoint }
        set { write(newValue, to: \.fields.breakpoint) }
    }

    /// The first exchange's response held at a breakpoint (see `HTTPRelay+ResponseBreakpoints.swift`).
    var heldResponse: HTTPRelayHeldResponse? {
        get { state?.fields.heldResponse }
        set { write(newValue, to: \.fields.heldResponse) }
    }
}
