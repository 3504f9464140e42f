/// One exchange at a breakpoint: whether it is paused, and what each event does to it. The relay feeds it events (the
/// exchange reached a phase, the web UI continued or aborted it, its connection's sweep found the deadline passed, the
/// exchange ended) and performs the action it returns; a pause is a hold released by the web UI instead of a timer (a
/// rule `delay`'s hold). A request continued runs on to its response, which pauses too when the breakpoint covers it.
public struct BreakpointMachine: Sendable, Equatable {
    /// Where the exchange is.
    public enum State: Sendable, Equatable {
        /// Running; it pauses at the next phase the breakpoint covers.
        case running
        /// Paused at `phase` until the web UI answers or `deadline` (monotonic nanoseconds) passes.
        case paused(BreakpointPhase, deadline: UInt64)
        /// Aborted, answered, or gone: no more pauses.
        case done
    }

    /// What happens to the exchange.
    public enum Event: Sendable, Equatable {
        /// The exchange reached `phase` at `now`.
        case reached(BreakpointPhase, now: UInt64)
        /// The web UI continues it, with its edits.
        case continued(BreakpointEdit)
        /// The web UI aborts it.
        case aborted
        /// The connection's sweep looked at the pause at `now` (on the proxy's clock).
        case timerFired(now: UInt64)
        /// The exchange ended another way (the client left, the connection closed).
        case exchangeEnded
    }

    /// What the relay does.
    public enum Action: Sendable, Equatable {
        /// Nothing: the exchange goes on as if there were no breakpoint here.
        case proceed
        /// Hold the exchange and list it as paused; the connection's sweep ends it at `deadline`.
        case hold(deadline: UInt64)
        /// Release the held exchange with `edit` applied.
        case release(BreakpointEdit)
        /// Answer the client with the proxy's own `status` and `reason` instead of going on.
        case answer(status: Int, reason: String)
        /// Unlist the paused exchange; nothing else to do.
        case forget
        /// An event that cannot happen in this state (a second answer from two open pages, say); the state is unchanged.
        case impossible(String)
    }

    public private(set) var state = State.running
    /// The breakpoint, and the rule that set it (named in the answers).
    public let breakpoint: Breakpoint
    public let rule: String

    /// A running exchange under `breakpoint` of `rule`.
    public init(_ breakpoint: Breakpoint, rule: String) {
        self.breakpoint = breakpoint
        self.rule = rule
    }

    /// Whether the exchange is paused now.
    public var isPaused: Bool {
        if case .paused = state { return true }
        return false
    }

    /// Whether a pause's deadline passed at `now`.
    public func deadlinePassed(at now: UInt64) -> Bool {
        if case .paused(_, let deadline) = state { return now >= deadline }
        return false
    }

    /// Takes `event`; returns what the relay does.
    public mutating func receive(_ event: Event) -> Action {
        switch (state, event) {
        case (.running, .reached(let phase, let now)):
            guard breakpoint.pauses(at: phase) else {
                if phase == .response { state = .done }
                return .proceed
            }
            let deadline = now &+ UInt64(breakpoint.timeout * 1_000_000_000)
            state = .paused(phase, deadline: deadline)
            return .hold(deadline: deadline)
        case (.paused(let phase, _), .continued(let edit)):
            state = phase == .request ? .running : .done
            return .release(edit)
        case (.paused(let phase, _), .aborted):
            state = .done
            return .answer(
                status: 502, reason: "the \(phase.rawValue) was aborted at breakpoint \"\(rule)\" from the web UI")
        case (.paused(let phase, let deadline), .timerFired(let now)):
            guard now >= deadline else { return .hold(deadline: deadline) }
            state = .done
            return .answer(
                status: 504,
                reason: "the \(phase.rawValue) was held at breakpoint \"\(rule)\" for "
                    + "\(QuantityText.duration(breakpoint.timeout)) without an answer from the web UI, and was aborted")
        case (.paused, .exchangeEnded):
            state = .done
            return .forget
        case (.running, .exchangeEnded), (.done, .exchangeEnded):
            state = .done
            return .proceed
        case (.paused, .reached(let phase, _)):
            return .impossible("the exchange reached its \(phase.rawValue) while paused")
        case (.running, .continued), (.running, .aborted), (.done, .continued), (.done, .aborted):
            return .impossible("the exchange is not paused (it was continued, aborted or timed out already)")
        case (.running, .timerFired), (.done, .timerFired):
            return .impossible("a pause timer fired for an exchange that is not paused")
        case (.done, .reached(let phase, _)):
            return .impossible("the exchange reached its \(phase.rawValue) after it was done")
        }
    }
}
