/// A duration in milliseconds rounded to what a person can tell apart: two decimals under 10 ms (`0.02`), one under
/// 100 ms, whole milliseconds above. Negative values (a phase that did not happen) stay as they are.
package enum Milliseconds {
    package static func shown(_ value: Double) -> Double {
        guard value >= 0, value.isFinite else { return value }
        let scale: Double = value < 10 ? 100 : value < 100 ? 10 : 1
        return (value * scale).rounded() / scale
    }
}
