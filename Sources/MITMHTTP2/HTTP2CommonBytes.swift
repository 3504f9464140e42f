import Glibc

/// The names and values of HPACK's static table (RFC 7541, Appendix A), held once: a received field that spells one
/// shares its bytes instead of allocating a copy, and a name its text instead of decoding the bytes again. Nearly
/// every head is mostly these (`:method`, `:path`, `:status`, `content-type`, `200`, `GET`); two allocations per
/// field were a tenth of an HTTP/2 request's cost, and decoding each name for the records about 220 instructions.
/// Values are decoded: most are not in the table, and a miss would cost the look-up as well.
enum HTTP2CommonBytes {
    /// `count` bytes at `start` as a field name: shared when the table has it.
    static func name(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
        names.shared(start, count: count)
    }

    /// `count` bytes at `start` as a field value: shared when the table has it.
    static func value(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
        values.shared(start, count: count)
    }

    /// A field name as text: the table's when it has the name (bytes that are not UTF-8 become U+FFFD).
    static func nameText(_ bytes: [UInt8]) -> String {
        names.text(bytes)
    }

    private static let names = Table(nameTexts)
    private static let values = Table(valueTexts)

    /// Entries found by their length and first byte, compared in one flat copy of their bytes: a search retains no
    /// array and compares the bytes of at most the few entries that share both (a scan of every entry of the length
    /// cost about 230 instructions a field).
    private struct Table: @unchecked Sendable {
        /// Where an entry's bytes are in the flat copy, under which key (`length * 256 + first byte`), and which
        /// entry it is.
        private struct Position {
            var key: Int
            var start: Int
            var entry: Int
        }

        /// What a match returns: an entry's bytes and its text.
        private struct Entry {
            var bytes: [UInt8]
            var text: String
        }

        /// In the table's order.
        private let entries: [Entry]
        /// Allocated once for the process and never freed: the positions sorted by key, then by the table's order;
        /// the entries' bytes one after another; and by key, the first position with that key plus one (0: none).
        private let positions: UnsafeMutableBufferPointer<Position>
        private let bytes: UnsafeMutableBufferPointer<UInt8>
        private let firstPositions: UnsafeMutableBufferPointer<Int>
        private let longest: Int

        init(_ texts: [String]) {
            let entries = texts.map { Entry(bytes: Array($0.utf8), text: $0) }
            func key(_ index: Int) -> Int { entries[index].bytes.count * 256 + Int(entries[index].bytes.first ?? 0) }
            let sorted = entries.indices.sorted { (key($0), $0) < (key($1), $1) }
            self.entries = entries
            longest = entries.map(\.bytes.count).max() ?? 0
            positions = .allocate(capacity: max(1, entries.count))
            bytes = .allocate(capacity: max(1, entries.reduce(0) { $0 + $1.bytes.count }))
            firstPositions = .allocate(capacity: (longest + 1) * 256)
            firstPositions.initialize(repeating: 0)
            var offset = 0
            for (position, index) in sorted.enumerated() {
                positions.initializeElement(at: position, to: Position(key: key(index), start: offset, entry: index))
                _ = UnsafeMutableBufferPointer(rebasing: bytes[offset...]).initialize(from: entries[index].bytes)
                offset += entries[index].bytes.count
                if firstPositions[key(index)] == 0 { firstPositions[key(index)] = position + 1 }
            }
        }

        /// Which entry spells the `count` bytes at `start`, if any.
        private func entry(spelling start: UnsafePointer<UInt8>, count: Int) -> Int? {
            guard count > 0, count <= longest else { return nil }
            let key = count * 256 + Int(start[0])
            var position = firstPositions[key] - 1
            while position >= 0, position < positions.count, positions[position].key == key {
                if memcmp(bytes.baseAddress! + positions[position].start, start, count) == 0 {
                    return positions[position].entry
                }
                position += 1
            }
            return nil
        }

        func shared(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
            guard let start else { return [] }
            if let entry = entry(spelling: start, count: count) { return entries[entry].bytes }
            return Array(UnsafeBufferPointer(start: start, count: count))
        }

        func text(_ received: [UInt8]) -> String {
            received.withUnsafeBufferPointer { received in
                guard let start = received.baseAddress, let entry = entry(spelling: start, count: received.count) else {
                    return String(decoding: received, as: UTF8.self)
                }
                return entries[entry].text
            }
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
