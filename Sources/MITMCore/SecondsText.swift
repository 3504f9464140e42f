/// Durations for messages: `10 s`, `0.5 s` (whole seconds without a fraction, others with up to three decimals).
package enum SecondsText {
    /// Formats `seconds`.
    package static func format(_ seconds: Double) -> String {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) < 1e15 else { return "\(seconds) s" }
        let whole = Int(milliseconds) / 1000
        let fraction = abs(Int(milliseconds) % 1000)
        guard fraction != 0 else { return "\(whole) s" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits) s"
    }

    /// Formats `duration` in seconds.
    package static func format(_ duration: Duration) -> String { format(duration.inSeconds) }
}
