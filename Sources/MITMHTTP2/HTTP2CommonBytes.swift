import Glibc

/// The names and values of HPACK's static table (RFC 7541, Appendix A), held once: a received field that spells one
/// shares its bytes instead of allocating a copy. Nearly every head is mostly these (`:method`, `:path`, `:status`,
/// `content-type`, `200`, `GET`), and two allocations per field were a tenth of an HTTP/2 request's cost.
enum HTTP2CommonBytes {
    /// `count` bytes at `start` as a field name: shared when the table has it.
    static func name(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
        names.shared(start, count: count)
    }

    /// `count` bytes at `start` as a field value: shared when the table has it.
    static func value(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
        values.shared(start, count: count)
    }

    private static let names = Table(nameTexts)
    private static let values = Table(valueTexts)

    /// Entries found by their length and first byte, compared in one flat copy: a search retains no array and
    /// compares the bytes of at most the few entries that share both (a scan of every entry of the length cost about
    /// 230 instructions a field).
    private struct Table: @unchecked Sendable {
        /// What a match returns, in the table's order.
        private let entries: [[UInt8]]
        /// Allocated once for the process and never freed. Sorted by key (`length * 256 + first byte`), then by the
        /// table's order: each position's key, where its bytes start in `bytes`, and which entry it is.
        private let keys: UnsafeMutableBufferPointer<Int>
        private let starts: UnsafeMutableBufferPointer<Int>
        private let entryIndices: UnsafeMutableBufferPointer<Int>
        private let bytes: UnsafeMutableBufferPointer<UInt8>
        /// By key: the first position with that key, plus one (0: none).
        private let firstPositions: UnsafeMutableBufferPointer<Int>
        private let longest: Int

        init(_ texts: [String]) {
            let entries = texts.map { Array($0.utf8) }
            func key(_ index: Int) -> Int { entries[index].count * 256 + Int(entries[index].first ?? 0) }
            let sorted = entries.indices.sorted { (key($0), $0) < (key($1), $1) }
            self.entries = entries
            longest = entries.map(\.count).max() ?? 0
            keys = .allocate(capacity: max(1, entries.count))
            starts = .allocate(capacity: max(1, entries.count))
            entryIndices = .allocate(capacity: max(1, entries.count))
            bytes = .allocate(capacity: max(1, entries.reduce(0) { $0 + $1.count }))
            firstPositions = .allocate(capacity: (longest + 1) * 256)
            firstPositions.initialize(repeating: 0)
            var offset = 0
            for (position, index) in sorted.enumerated() {
                keys[position] = key(index)
                starts[position] = offset
                entryIndices[position] = index
                _ = UnsafeMutableBufferPointer(rebasing: bytes[offset...]).initialize(from: entries[index])
                offset += entries[index].count
                if firstPositions[key(index)] == 0 { firstPositions[key(index)] = position + 1 }
            }
        }

        func shared(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
            guard let start else { return [] }
            if count > 0, count <= longest {
                let key = count * 256 + Int(start[0])
                var position = firstPositions[key] - 1
                while position >= 0, position < entries.count, keys[position] == key {
                    if memcmp(bytes.baseAddress! + starts[position], start, count) == 0 {
                        return entries[entryIndices[position]]
                    }
                    position += 1
                }
            }
            return Array(UnsafeBufferPointer(start: start, count: count))
        }
    }

    /// In the static table's order, which puts the commonest of each length first.
    private static let nameTexts = [
        ":authority", ":method", ":path", ":scheme", ":status", "accept-charset", "accept-encoding",
        "accept-language", "accept-ranges", "accept", "access-control-allow-origin", "age", "allow", "authorization",
        "cache-control", "content-disposition", "content-encoding", "content-language", "content-length",
        "content-location", "content-range", "content-type", "cookie", "date", "etag", "expect", "expires", "from",
        "host", "if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified",
        "link", "location", "max-forwards", "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh",
        "retry-after", "server", "set-cookie", "strict-transport-security", "transfer-encoding", "user-agent", "vary",
        "via", "www-authenticate",
    ]

    private static let valueTexts = [
        "GET", "POST", "/", "/index.html", "http", "https", "200", "204", "206", "304", "400", "404", "500",
        "gzip, deflate",
    ]
}
