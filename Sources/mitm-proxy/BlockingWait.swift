import Dispatch
import Synchronization

/// Runs `operation` in a task and blocks the calling thread until it returns. Only for the command's own thread, which
/// has nothing else to do meanwhile; never from a task (it would hold one of the concurrency pool's threads).
func waitBlocking<Value: Sendable>(_ operation: @escaping @Sendable () async -> Value) -> Value {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Value?>(nil)
    Task {
        let value = await operation()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}
