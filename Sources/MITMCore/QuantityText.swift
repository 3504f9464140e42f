/// Parses the quantities rules and throttle profiles are written in: durations (`2s`, `300ms`, `1.5s`,
/// `1m`) and bandwidths (`256kbit`, `1.6mbit`, `64kbps`, `2mbit/s`).
public enum QuantityText {
    /// Seconds in `text`: a number followed by `ms`, `s` or `m`; nil when it is not one, or negative.
    public static func seconds(_ text: String) -> Double? {
        let lowered = text.lowercased().trimmingSpaces
        for (unit, factor) in [("ms", 0.001), ("s", 1.0), ("m", 60.0)] where lowered.hasSuffix(unit) {
            guard let value = Double(lowered.dropLast(unit.count).trimmingSpaces), value >= 0, value.isFinite else {
                return nil
            }
            return value * factor
        }
        return nil
    }

    /// Bits per second in `text`: a number followed by `bit`, `kbit`, `mbit` or `gbit` (an optional `/s`),
    /// or `bps`, `kbps`, `mbps`, `gbps` (also bits); nil when it is not one, or not positive.
    public static func bitsPerSecond(_ text: String) -> Double? {
        var lowered = text.lowercased().trimmingSpaces
        if lowered.hasSuffix("/s") { lowered = String(lowered.dropLast(2)) }
        let units: [(String, Double)] = [
            ("kbit", 1e3), ("mbit", 1e6), ("gbit", 1e9), ("bit", 1),
            ("kbps", 1e3), ("mbps", 1e6), ("gbps", 1e9), ("bps", 1),
        ]
        for (unit, factor) in units where lowered.hasSuffix(unit) {
            guard let value = Double(lowered.dropLast(unit.count).trimmingSpaces), value > 0, value.isFinite else {
                return nil
            }
            return value * factor
        }
        return nil
    }

    /// `2s`, `300ms`, `1.5s`: the shortest way to write `seconds`.
    public static func duration(_ seconds: Double) -> String {
        if seconds < 1 { return "\(Self.number(seconds * 1000))ms" }
        return "\(Self.number(seconds))s"
    }

    /// `256kbit/s`, `1.6mbit/s`: the shortest way to write `bitsPerSecond`.
    public static func bandwidth(_ bitsPerSecond: Double) -> String {
        if bitsPerSecond >= 1e6 { return "\(Self.number(bitsPerSecond / 1e6))mbit/s" }
        if bitsPerSecond >= 1e3 { return "\(Self.number(bitsPerSecond / 1e3))kbit/s" }
        return "\(Self.number(bitsPerSecond))bit/s"
    }

    private static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? whole(rounded) : String(rounded)
    }

    /// `12` for 12.0; a value too large for an `Int` as `Double` writes it (`1e+300`) instead of trapping.
    static func whole(_ value: Double) -> String {
        Int(exactly: value).map(String.init) ?? String(value)
    }
}

extension StringProtocol {
    package var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
