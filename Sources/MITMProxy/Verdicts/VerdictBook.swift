import Foundation
import MITMCore
import Synchronization

/// The account of a proxy run, readable from any thread: a `VerdictLedger` (per-host aggregates, the
/// clients that proved they trust the CA, a bounded window of connection detail), waiters for tests, and
/// a count of connections still undecided (to let verdicts settle).
final class VerdictBook: Sendable {
    private struct State {
        var ledger: VerdictLedger
        var pending = 0
        var waiters: [UUID: (host: String, continuation: CheckedContinuation<HostVerdict?, Never>)] = [:]
        /// Tasks waiting for `pending` to reach zero.
        var settleWaiters: [UUID: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state: Mutex<State>

    init(detailLimit: Int) {
        state = Mutex(State(ledger: VerdictLedger(detailLimit: detailLimit)))
    }

    func connectionStarted() { state.withLock { $0.pending += 1 } }

    func connectionDecided() {
        let settled = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.pending -= 1
            guard state.pending == 0, !state.settleWaiters.isEmpty else { return [] }
            defer { state.settleWaiters = [:] }
            return Array(state.settleWaiters.values)
        }
        for waiter in settled { waiter.resume(returning: true) }
    }

    /// Connections whose verdict is not decided yet.
    var pendingCount: Int { state.withLock { $0.pending } }

    /// Adds a decided verdict (`previous`: the inconclusive verdict it upgrades, if any).
    func record(_ verdict: ConnectionVerdict, replacing previous: Verdict?) {
        let ready: [(CheckedContinuation<HostVerdict?, Never>, HostVerdict?)] = state.withLock { state in
            state.ledger.record(verdict, replacing: previous)
            guard !state.waiters.isEmpty else { return [] }
            let matching = state.waiters.filter { $0.value.host == verdict.host }
            guard !matching.isEmpty else { return [] }
            let aggregate = state.ledger.hostVerdicts(named: verdict.host).first
            for key in matching.keys { state.waiters.removeValue(forKey: key) }
            return matching.values.map { ($0.continuation, aggregate) }
        }
        for (continuation, aggregate) in ready { continuation.resume(returning: aggregate) }
    }

    /// A client loaded the trust probe.
    /// The client of `record` loaded the trust probe: it trusts the CA.
    func proveClient(_ record: ConnectionVerdict) {
        state.withLock { state in
            if let identity = record.identity {
                state.ledger.proveClient(identity)
            } else {
                state.ledger.proveClient(record.clientKey)
            }
        }
    }

    /// Takes what the account needs from other events: requests on intercepted connections and upstream failures.
    func observe(_ event: ProxyEvent) {
        switch event {
        case .exchange(let record) where record.scheme == "https":
            let answered = record.response?.status == 502 && record.failure != nil
            state.withLock {
                $0.ledger.recordRequest(
                    host: record.host, port: record.port, answeredWith502: answered ? record.failure : nil)
            }
        case .upstreamFailed(_, let host, let port, let reason):
            state.withLock { $0.ledger.recordUpstreamFailure(host: host, port: port, reason: reason) }
        default:
            return
        }
    }

    /// A copy of the ledger as of now.
    var ledger: VerdictLedger { state.withLock { $0.ledger } }

    /// The most recent connection verdicts, oldest first.
    var connections: [ConnectionVerdict] { state.withLock { $0.ledger.connections } }

    /// Per host and port aggregates.
    var hosts: [HostVerdict] { state.withLock { $0.ledger.hostVerdicts } }

    /// Waits until `host` has at least one decided connection, or `timeout` passes (nil then).
    func waitForVerdict(host: String, timeout: Duration) async -> HostVerdict? {
        let key = UUID()
        let wanted = host.lowercased()
        return await withCheckedContinuation { continuation in
            let existing: HostVerdict? = state.withLock { state in
                if let seen = state.ledger.hostVerdicts(named: wanted).first { return seen }
                state.waiters[key] = (wanted, continuation)
                return nil
            }
            if let existing {
                continuation.resume(returning: existing)
                return
            }
            Task {
                try? await Task.sleep(for: timeout)
                let expired = state.withLock { $0.waiters.removeValue(forKey: key) }
                expired?.continuation.resume(returning: nil)
            }
        }
    }

    /// Waits until no connection is undecided (true) or `timeout` passes (false).
    func settle(timeout: Duration) async -> Bool {
        let key = UUID()
        return await withCheckedContinuation { continuation in
            let settled = state.withLock { state -> Bool in
                guard state.pending > 0 else { return true }
                state.settleWaiters[key] = continuation
                return false
            }
            if settled {
                continuation.resume(returning: true)
                return
            }
            Task {
                try? await Task.sleep(for: timeout)
                let expired = state.withLock { $0.settleWaiters.removeValue(forKey: key) }
                expired?.resume(returning: false)
            }
        }
    }
}
