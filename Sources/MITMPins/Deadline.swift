/// A point in time after which a network step gives up.
struct Deadline {
    private let end: ContinuousClock.Instant
    /// The whole allowance, for messages.
    let seconds: Double

    /// A deadline `seconds` from now.
    init(seconds: Double) {
        self.seconds = seconds
        end = ContinuousClock.now.advanced(by: .milliseconds(Int64(seconds * 1000)))
    }

    /// Milliseconds left, for `poll`; 0 once passed.
    var remainingMilliseconds: Int32 {
        let left = ContinuousClock.now.duration(to: end)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    /// `10 s`, `0.5 s`.
    var text: String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
