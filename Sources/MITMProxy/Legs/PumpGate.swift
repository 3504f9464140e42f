/// The guard of a loop that moves work until nothing moves, and that its own steps re-enter: a relay's pump hands
/// events to other pumps, which call it back. A call made while the loop runs only asks it for another round, so the
/// loop never nests and nothing asked for is lost.
///
///     guard gate.enter() else { return }
///     defer { gate.leave() }
///     repeat {
///         ...
///         if moved { gate.askAgain() }
///     } while gate.takeAgain()
struct PumpGate {
    private(set) var isRunning = false
    private var again = false

    /// Whether the caller runs the loop now; false when it runs already (another round is then asked for).
    mutating func enter() -> Bool {
        if isRunning {
            again = true
            return false
        }
        isRunning = true
        return true
    }

    /// Asks the running loop for another round.
    mutating func askAgain() { again = true }

    /// Whether another round was asked for since the last call; the request is taken.
    mutating func takeAgain() -> Bool {
        defer { again = false }
        return again
    }

    /// The loop is over.
    mutating func leave() {
        isRunning = false
        again = false
    }
}
