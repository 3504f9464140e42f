import Foundation

/// Waiting for a condition with a deadline instead of sleeping for a guessed time.
public enum Poll {
    /// Evaluates `condition` every `interval` until it holds (true) or `timeout` passes (false).
    public static func until(
        timeout: Duration = .seconds(10),
        interval: Duration = .milliseconds(20),
        _ condition: () async throws -> Bool
    ) async rethrows -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if try await condition() { return true }
            if clock.now >= deadline { return false }
            try? await Task.sleep(for: interval)
        }
    }
}
