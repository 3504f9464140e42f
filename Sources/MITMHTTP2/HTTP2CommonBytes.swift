import Glibc

/// The names and values of HPACK's static table (RFC 7541, Appendix A), held once: a received field that spells one
/// shares its bytes instead of allocating a copy. Nearly every head is mostly these (`:method`, `:path`, `:status`,
/// `content-type`, `200`, `GET`), and two allocations per field were a tenth of an HTTP/2 request's cost.
enum HTTP2CommonBytes {
    /// `count` bytes at `start` as a field name: shared when the table has it.
    static func name(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
        shared(start, count: count, in: namesByLength)
    }

    /// `count` bytes at `start` as a field value: shared when the table has it.
    static func value(_ start: UnsafePointer<UInt8>?, count: Int) -> [UInt8] {
        shared(start, count: count, in: valuesByLength)
    }

    private static func shared(_ start: UnsafePointer<UInt8>?, count: Int, in table: [[[UInt8]]]) -> [UInt8] {
        guard let start else { return [] }
        if count < table.count {
            for candidate in table[count]
            where candidate.withUnsafeBufferPointer({ memcmp($0.baseAddress!, start, count) == 0 }) {
                return candidate
            }
        }
        return Array(UnsafeBufferPointer(start: start, count: count))
    }

    /// The table's entries grouped by length, so that a field is compared only with entries of its own length.
    private static func byLength(_ texts: [String]) -> [[[UInt8]]] {
        let longest = texts.map(\.utf8.count).max() ?? 0
        var table = [[[UInt8]]](repeating: [], count: longest + 1)
        for text in texts { table[text.utf8.count].append(Array(text.utf8)) }
        return table
    }

    /// In the static table's order, which puts the commonest of each length first.
    private static let namesByLength = byLength([
        ":authority", ":method", ":path", ":scheme", ":status", "accept-charset", "accept-encoding",
        "accept-language", "accept-ranges", "accept", "access-control-allow-origin", "age", "allow", "authorization",
        "cache-control", "content-disposition", "content-encoding", "content-language", "content-length",
        "content-location", "content-range", "content-type", "cookie", "date", "etag", "expect", "expires", "from",
        "host", "if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified",
        "link", "location", "max-forwards", "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh",
        "retry-after", "server", "set-cookie", "strict-transport-security", "transfer-encoding", "user-agent", "vary",
        "via", "www-authenticate",
    ])

    private static let valuesByLength = byLength([
        "GET", "POST", "/", "/index.html", "http", "https", "200", "204", "206", "304", "400", "404", "500",
        "gzip, deflate",
    ])
}
