import MITMCore
import Synchronization

/// Collects every event a proxy emits, from any thread, for assertions.
final class EventRecorder: Sendable {
    private let recorded = Mutex<[ProxyEvent]>([])
    private let flushing = Mutex<(@Sendable () -> Void)?>(nil)

    /// Makes every read first wait for events the proxy emitted before it (they arrive on a recording queue).
    func flushBeforeReading(_ flush: @escaping @Sendable () -> Void) {
        flushing.withLock { $0 = flush }
    }

    /// Appends one event (the subscriber the harness installs).
    func record(_ event: ProxyEvent) {
        recorded.withLock { $0.append(event) }
    }

    /// Everything recorded so far, in order.
    var events: [ProxyEvent] {
        flushing.withLock { $0 }?()
        return recorded.withLock { $0 }
    }

    /// The exchanges recorded so far.
    var exchanges: [ExchangeRecord] {
        events.compactMap { if case .exchange(let record) = $0 { record } else { nil } }
    }

    /// The first recorded event `matching`, waiting up to `timeout` for it.
    func first(timeout: Duration = .seconds(10), _ matching: @escaping (ProxyEvent) -> Bool) async -> ProxyEvent? {
        var found: ProxyEvent?
        _ = await Poll.until(timeout: timeout) {
            found = events.first(where: matching)
            return found != nil
        }
        return found
    }
}

extension ProxyEvent {
    /// The reason text of a failure event, nil for other events.
    var failureReason: String? {
        switch self {
        case .clientTLSFailed(_, _, _, let reason), .upstreamFailed(_, _, _, let reason), .badRequest(_, _, let reason):
            reason
        case .exchange(let record):
            record.failure
        default:
            nil
        }
    }
}
