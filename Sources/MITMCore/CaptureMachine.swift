/// The life of a `--capture` run, sans-IO: which step of making the namespace comes next, when the client command may
/// run, and what to take down, in reverse, whatever way the run ends. Events in, actions out; the I/O layer performs the
/// actions and reports each step's result. A failed step is taken down too (it may have done part of its work), then
/// every step before it; a signal during setup lets the step in flight finish, then takes down what exists; an event
/// the state cannot have is thrown as `ImpossibleEvent`, naming both.
public struct CaptureMachine: Sendable, Equatable {
    /// What the capture sets up, in order.
    public enum Step: Int, Sendable, Equatable, CaseIterable, CustomStringConvertible {
        /// The network namespace.
        case namespace
        /// The veth pair, one end moved into the namespace.
        case link
        /// The /30 on both ends, the links (and the namespace's loopback) up.
        case addresses
        /// The namespace's default route through this machine's end.
        case routes
        /// The namespace's resolv.conf (`/etc/netns/NAME`).
        case resolver
        /// The transparent listener and the DNS responder on this machine's end (the proxy server's).
        case listeners
        /// The nftables table that redirects the namespace's TCP and DNS and refuses its other UDP.
        case rules
        /// The client command, run inside the namespace.
        case command

        public var description: String {
            switch self {
            case .namespace: "the network namespace"
            case .link: "the veth pair"
            case .addresses: "the link's addresses"
            case .routes: "the namespace's route"
            case .resolver: "the namespace's resolv.conf"
            case .listeners: "the transparent listener and DNS responder"
            case .rules: "the nftables redirect"
            case .command: "the client command"
            }
        }
    }

    /// How the run ended.
    public enum Outcome: Sendable, Equatable {
        /// The client command ran and ended.
        case completed
        /// `step` could not be done.
        case failed(Step, reason: String)
        /// SIGINT or SIGTERM came before the client command ran.
        case interrupted
        /// The run ended for a reason of its own (`end` before the command ended).
        case abandoned
    }

    public enum State: Sendable, Equatable {
        case idle
        /// Removing what crashed runs left.
        case removingLeftovers(interrupted: Bool)
        /// `step` is being done; `interrupted` once a signal came meanwhile.
        case settingUp(Step, interrupted: Bool)
        case runningCommand(pid: Int32)
        /// The command ended; the proxy settles its verdicts before `end` takes everything down.
        case commandEnded
        case ended(Outcome)
    }

    public enum Event: Sendable, Equatable {
        /// The run starts.
        case begin
        case leftoversRemoved
        case stepDone(Step)
        case stepFailed(Step, reason: String)
        /// The client command runs as `pid`.
        case commandStarted(pid: Int32)
        case commandEnded
        /// SIGINT or SIGTERM.
        case signal
        /// The run ends, whatever way: take down whatever exists (nothing, the second time).
        case end
    }

    public enum Action: Sendable, Equatable {
        case removeLeftovers
        /// Do `step`, then report `stepDone` or `stepFailed` (for `.command`: `commandStarted`, later `commandEnded`).
        case perform(Step)
        /// Pass the signal on to the client command.
        case signalCommand(pid: Int32)
        /// Take `step` down (for `.command`: end whatever still runs in the namespace). Harmless when it is not there.
        case undo(Step)
    }

    /// An event the state cannot have: a mistake of the I/O layer, told rather than ignored.
    public struct ImpossibleEvent: Error, Sendable, Equatable, CustomStringConvertible {
        public let event: Event
        public let state: State
        public var description: String { "capture: event \(event) cannot happen in state \(state)" }

        package init(event: Event, state: State) {
            self.event = event
            self.state = state
        }
    }

    public private(set) var state = State.idle

    public init() {}

    /// The outcome, once the run ended.
    public var outcome: Outcome? {
        if case .ended(let outcome) = state { outcome } else { nil }
    }

    public mutating func handle(_ event: Event) throws(ImpossibleEvent) -> [Action] {
        switch (state, event) {
        case (.idle, .begin):
            state = .removingLeftovers(interrupted: false)
            return [.removeLeftovers]
        case (.removingLeftovers(let interrupted), .leftoversRemoved):
            return interrupted ? end(.interrupted, undoingThrough: nil) : start(.namespace)
        case (.settingUp(let step, let interrupted), .stepDone(let done)) where done == step && step != .command:
            guard !interrupted else { return end(.interrupted, undoingThrough: step) }
            return start(Step(rawValue: step.rawValue + 1) ?? .command)
        case (.settingUp(let step, _), .stepFailed(let failed, let reason)) where failed == step:
            return end(.failed(step, reason: reason), undoingThrough: step)
        case (.settingUp(.command, let interrupted), .commandStarted(let pid)):
            state = .runningCommand(pid: pid)
            return interrupted ? [.signalCommand(pid: pid)] : []
        case (.runningCommand, .commandEnded):
            state = .commandEnded
            return []

        case (.idle, .signal):
            state = .ended(.interrupted)
            return []
        case (.removingLeftovers, .signal):
            state = .removingLeftovers(interrupted: true)
            return []
        case (.settingUp(let step, _), .signal):
            state = .settingUp(step, interrupted: true)
            return []
        case (.runningCommand(let pid), .signal):
            return [.signalCommand(pid: pid)]
        case (.commandEnded, .signal), (.ended, .signal):
            return []

        case (.idle, .end), (.removingLeftovers, .end):
            return end(.abandoned, undoingThrough: nil)
        case (.settingUp(let step, _), .end):
            return end(.abandoned, undoingThrough: step)
        case (.runningCommand, .end):
            return end(.abandoned, undoingThrough: .command)
        case (.commandEnded, .end):
            return end(.completed, undoingThrough: .command)
        case (.ended, .end):
            return []

        default:
            throw ImpossibleEvent(event: event, state: state)
        }
    }

    private mutating func start(_ step: Step) -> [Action] {
        state = .settingUp(step, interrupted: false)
        return [.perform(step)]
    }

    /// Ends the run: every step up to `last` taken down, the last first.
    private mutating func end(_ outcome: Outcome, undoingThrough last: Step?) -> [Action] {
        state = .ended(outcome)
        guard let last else { return [] }
        return Step.allCases.filter { $0.rawValue <= last.rawValue }.reversed().map(Action.undo)
    }
}
