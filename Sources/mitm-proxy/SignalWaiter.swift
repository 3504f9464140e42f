import Dispatch
import Foundation

/// SIGINT/SIGTERM handling through Dispatch sources (the default handlers would kill the process
/// before the report is written).
enum SignalWaiter {
    private static let queue = DispatchQueue(label: "mitm-proxy.signals")

    /// Starts catching SIGINT and SIGTERM now, before anyone is told the proxy listens: a signal that
    /// arrives before the wait still ends it (and one between `SIG_IGN` and a late source would be lost).
    static func catchTermination() -> Termination {
        let semaphore = DispatchSemaphore(value: 0)
        return Termination(semaphore: semaphore, watcher: forward { semaphore.signal() })
    }

    /// SIGINT/SIGTERM caught since `catchTermination()`.
    struct Termination {
        let semaphore: DispatchSemaphore
        let watcher: SignalWatcher

        /// Blocks until SIGINT or SIGTERM has arrived.
        func wait() {
            semaphore.wait()
            watcher.cancel()
        }
    }

    /// Calls `action` on every SIGINT/SIGTERM until the returned watcher is cancelled.
    static func forward(_ action: @escaping @Sendable () -> Void) -> SignalWatcher {
        let sources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: action)
            source.activate()
            return source
        }
        return SignalWatcher(sources: sources)
    }
}

/// Active signal sources; `cancel()` stops them.
struct SignalWatcher {
    let sources: [DispatchSourceSignal]
    func cancel() { sources.forEach { $0.cancel() } }
}
