import Foundation

/// Runs blocking work on a thread of its own so it never ties up the Swift concurrency pool.
public enum DedicatedThread {
    /// Runs `work` on a new thread and returns its result.
    public static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try work() })
            }.start()
        }
    }
}
