import MITMCore
import MITMIO
import Synchronization

/// Runs the `SpareConnectionJudge` for a whole proxy: connections from every loop report to it, held
/// candidates wait for one timer on the proxy's clock (due when the judge's next deadline is), and each ruling is
/// published as the connection's verdict.
final class SpareConnectionDesk: Sendable {
    private struct State {
        var judge: SpareConnectionJudge
        var held: [Int: ConnectionVerdict] = [:]
        var timer: (any ClockTimer)?
        /// The judge's deadline, in its seconds, that `timer` is armed for.
        var timerDue = Double.infinity
    }

    private let state: Mutex<State>
    private let book: VerdictBook
    private let loop: EventLoop
    private let publish: @Sendable (ConnectionVerdict) -> Void

    /// The timer fires this long after a deadline, so the judge's arithmetic in seconds finds it passed.
    private static let margin = 0.005

    /// `publish` records and announces a final verdict; the timer runs on `loop`.
    init(
        silenceWindow: Double, book: VerdictBook, clock: ProxyClock, loop: EventLoop,
        publish: @escaping @Sendable (ConnectionVerdict) -> Void
    ) {
        state = Mutex(State(judge: SpareConnectionJudge(silenceWindow: silenceWindow)))
        self.book = book
        self.clock = clock
        self.loop = loop
        self.publish = publish
    }

    /// The proxy's clock (the judge reasons in its seconds).
    let clock: ProxyClock

    /// An intercepted connection, opened at `openedAt` (monotonic nanoseconds): a possible sibling for spare connections.
    func intercepted(_ record: ConnectionVerdict, openedAt: UInt64) {
        run(.intercepted(connection: record.connectionID, key: key(record), openedAt: Self.seconds(openedAt)))
    }

    /// A connection went away.
    func connectionEnded(_ connectionID: Int) {
        run(.closed(connection: connectionID, at: clock.nowInSeconds))
    }

    /// A `refused` verdict by a close without a request (during or after the handshake), for a connection opened at
    /// `openedAt` (monotonic nanoseconds): published as is, or as `unused` when a sibling of the same client was open
    /// at the same time.
    func closedWithoutRequest(_ record: ConnectionVerdict, openedAt: UInt64) {
        state.withLock { $0.held[record.connectionID] = record }
        book.connectionStarted()
        run(
            .closedWithoutRequest(
                connection: record.connectionID, key: key(record), openedAt: Self.seconds(openedAt),
                at: clock.nowInSeconds))
    }

    /// The proxy is stopping: every held candidate becomes a refusal now.
    func flush() { run(.flush) }

    private func key(_ record: ConnectionVerdict) -> SpareConnectionJudge.Key {
        SpareConnectionJudge.Key(client: record.clientKey, host: record.host, port: record.port)
    }

    private static func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }

    private func run(_ event: SpareConnectionJudge.Event) {
        let decided: [ConnectionVerdict] = state.withLock { state in
            defer { armTimer(&state) }
            return state.judge.receive(event).compactMap { ruling in
                switch ruling {
                case .unused(let id, let sibling):
                    guard var record = state.held.removeValue(forKey: id) else { return nil }
                    let inHandshake = record.verdict.reason == .closedInHandshake
                    record.verdict = Verdict(
                        kind: .unused, reason: inHandshake ? .abandonedInHandshake : .unusedDuplicate,
                        alert: record.verdict.alert,
                        detail:
                            "connection \(sibling) of the same client to the same host, open at the same time, was used instead"
                    )
                    return record
                case .refused(let id):
                    return state.held.removeValue(forKey: id)
                }
            }
        }
        for record in decided {
            publish(record)
            book.connectionDecided()
        }
    }

    /// Arms the timer for the judge's next deadline, unless it is armed for that one or an earlier one.
    private func armTimer(_ locked: inout State) {
        guard let due = locked.judge.nextDeadline else {
            locked.timer = nil
            locked.timerDue = .infinity
            return
        }
        guard locked.timer == nil || due < locked.timerDue else { return }
        locked.timerDue = due
        locked.timer = clock.schedule(at: ProxyClock.deadline(due + Self.margin, after: 0), on: loop) { [self] in
            state.withLock { $0.timer = nil }
            run(.tick(at: clock.nowInSeconds))
        }
    }
}
