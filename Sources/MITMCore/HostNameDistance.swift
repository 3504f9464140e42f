/// How far apart two host names are, for "did you mean" hints on an expectation nobody matched (a typo in a host).
enum HostNameDistance {
    /// The seen host closest to `pattern` (a name, or `*.name` compared by its name) when it is a likely typo: at most
    /// two edits, and fewer edits than a fifth of the name's length plus one.
    static func closest(to pattern: String, among hosts: [String]) -> String? {
        let wanted = pattern.hasPrefix("*.") ? String(pattern.dropFirst(2)) : pattern
        let limit = min(2, wanted.count / 5 + 1)
        let scored = Set(hosts).compactMap { host -> (String, Int)? in
            let distance = edits(Array(wanted.utf8), Array(host.utf8), limit: limit)
            return distance <= limit && distance > 0 ? (host, distance) : nil
        }
        return scored.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }

    /// Levenshtein distance, giving up (limit + 1) once every path is over `limit`.
    static func edits(_ left: [UInt8], _ right: [UInt8], limit: Int) -> Int {
        guard abs(left.count - right.count) <= limit else { return limit + 1 }
        var previous = Array(0...right.count)
        for (i, a) in left.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: right.count)
            for (j, b) in right.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1))
            }
            if current.min()! > limit { return limit + 1 }
            previous = current
        }
        return previous[right.count]
    }
}
