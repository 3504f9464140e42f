/// A filter over the web UI's flows in the language mitmproxy users know: `~d api.example.com & ~c 4xx`,
/// `~bs token | !~m GET`, parentheses; a word without `~` matches the flow's method, URL, status or verdict.
/// Values are case-insensitive substrings (not regular expressions). Parse with `FlowFilter(parsing:)`, which names
/// the column of a mistake; match with `matches(_:)`.
package indirect enum FlowFilter: Sendable, Equatable {
    /// A word: found in the method, URL, status, verdict, how it was reached, the failure or the protocol.
    case text(String)
    case test(Test)
    case not(FlowFilter)
    case and(FlowFilter, FlowFilter)
    case or(FlowFilter, FlowFilter)

    /// Which message of an exchange a test looks at (a WebSocket's messages: `request` is those the client sent).
    package enum Side: Sendable, Equatable {
        case either, request, response
    }

    /// A status code (`404`) or a class of them (`4xx`).
    package struct StatusRange: Sendable, Equatable {
        package var lowest: Int
        package var highest: Int
    }

    /// One `~` test.
    package enum Test: Sendable, Equatable {
        case domain(String)
        case method(String)
        case status(StatusRange)
        case url(String)
        case body(String, Side)
        case header(String, Side)
        case contentType(String, Side)
        /// A failed exchange, or a TLS connection the client refused or failed.
        case error
        /// An exchange without a response, or with one.
        case noResponse
        case hasResponse
        case webSocket
        /// An exchange a rule changed or answered.
        case rule
        case all
    }

    /// The tests by name, and whether each takes a value.
    static let tests: [(name: String, takesValue: Bool, make: @Sendable (String) -> Test?)] = [
        ("d", true, { .domain($0) }), ("m", true, { .method($0) }),
        ("c", true, { StatusRange(parsing: $0).map(Test.status) }),
        ("u", true, { .url($0) }),
        ("b", true, { .body($0, .either) }), ("bq", true, { .body($0, .request) }),
        ("bs", true, { .body($0, .response) }),
        ("h", true, { .header($0, .either) }), ("hq", true, { .header($0, .request) }),
        ("hs", true, { .header($0, .response) }),
        ("t", true, { .contentType($0, .either) }), ("tq", true, { .contentType($0, .request) }),
        ("ts", true, { .contentType($0, .response) }),
        ("e", false, { _ in .error }), ("q", false, { _ in .noResponse }), ("s", false, { _ in .hasResponse }),
        ("websocket", false, { _ in .webSocket }), ("rule", false, { _ in .rule }), ("all", false, { _ in .all }),
    ]

    /// The filter `text` says, or what is wrong with it and where.
    package init(parsing text: String) throws(FlowFilterError) {
        var parser = FlowFilterParser(text)
        self = try parser.parse()
    }
}

extension FlowFilter.StatusRange {
    /// `404`, or `4xx` for 400 to 499; nil for anything else.
    init?(parsing text: String) {
        let lower = text.lowercased()
        if lower.count == 3, lower.hasSuffix("xx"), let digit = Int(lower.prefix(1)), (1...5).contains(digit) {
            self.init(lowest: digit * 100, highest: digit * 100 + 99)
        } else if let code = Int(text), (100...999).contains(code) {
            self.init(lowest: code, highest: code)
        } else {
            return nil
        }
    }
}

/// What is wrong with a filter, and where: `column` counts characters from 1, `length` is how many are concerned.
package struct FlowFilterError: Error, Sendable, Equatable, Encodable, CustomStringConvertible {
    package var message: String
    package var column: Int
    package var length: Int

    package var description: String { "\(message) (column \(column))" }
}
