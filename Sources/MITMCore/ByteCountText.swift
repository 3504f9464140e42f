/// Human-readable byte counts for console lines: `512 B`, `1.2 kB`, `10.5 MB` (decimal units, as curl and browsers print).
package enum ByteCountText {
    /// Formats `count` bytes with one decimal above a kilobyte.
    package static func format(_ count: Int) -> String {
        if count < 1000 { return "\(count) B" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(count) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
