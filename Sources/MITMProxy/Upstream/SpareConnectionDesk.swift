import Dispatch
import Foundation
import MITMCore
import Synchronization

/// Runs the `SpareConnectionJudge` for a whole proxy: connections from every loop report to it, held
/// candidates wait on its own queue's timers, and each ruling is published as the connection's verdict.
final class SpareConnectionDesk: Sendable {
    private struct State {
        var judge: SpareConnectionJudge
        var held: [Int: ConnectionVerdict] = [:]
    }

    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "mitm-proxy.spare-connections")
    private let book: VerdictBook
    private let window: Double
    private let publish: @Sendable (ConnectionVerdict) -> Void

    /// `publish` records and announces a final verdict.
    init(silenceWindow: Double, book: VerdictBook, clock: ProxyClock, publish: @escaping @Sendable (ConnectionVerdict) -> Void) {
        state = Mutex(State(judge: SpareConnectionJudge(silenceWindow: silenceWindow)))
        self.book = book
        self.clock = clock
        window = silenceWindow
        self.publish = publish
    }

    /// The proxy's clock (the judge reasons in its seconds).
    let clock: ProxyClock

    /// An intercepted connection, opened at `openedAt`: a possible sibling for spare connections.
    func intercepted(_ record: ConnectionVerdict, openedAt: Double) {
        run(.intercepted(connection: record.connectionID, key: key(record), openedAt: openedAt))
    }

    /// A connection went away.
    func connectionEnded(_ connectionID: Int) {
        run(.closed(connection: connectionID, at: clock.nowInSeconds))
    }

    /// A `refused` verdict by a close without a request (during or after the handshake), for a connection opened at
    /// `openedAt`: published as is, or as `unused` when a sibling of the same client was open at the same time.
    func closedWithoutRequest(_ record: ConnectionVerdict, openedAt: Double) {
        state.withLock { $0.held[record.connectionID] = record }
        book.connectionStarted()
        run(.closedWithoutRequest(connection: record.connectionID, key: key(record), openedAt: openedAt, at: clock.nowInSeconds))
        queue.asyncAfter(deadline: .now() + window + 0.005) { [self] in run(.tick(at: clock.nowInSeconds)) }
    }

    /// The proxy is stopping: every held candidate becomes a refusal now.
    func flush() { run(.flush) }

    private func key(_ record: ConnectionVerdict) -> SpareConnectionJudge.Key {
        SpareConnectionJudge.Key(client: record.clientKey, host: record.host, port: record.port)
    }

    private func run(_ event: SpareConnectionJudge.Event) {
        let decided: [ConnectionVerdict] = state.withLock { state in
            state.judge.receive(event).compactMap { ruling in
                switch ruling {
                case .unused(let id, let sibling):
                    guard var record = state.held.removeValue(forKey: id) else { return nil }
                    let inHandshake = record.verdict.reason == .closedInHandshake
                    record.verdict = Verdict(kind: .unused, reason: inHandshake ? .abandonedInHandshake : .unusedDuplicate,
                                             alert: record.verdict.alert,
                                             detail: "connection \(sibling) of the same client to the same host, open at the same time, was used instead")
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
}
