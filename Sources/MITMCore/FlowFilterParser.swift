/// Reads a `FlowFilter` from text: `!` binds tightest, then `&` (also two filters side by side), then `|`.
struct FlowFilterParser {
    private enum Kind: Equatable {
        case open, close, not, and, or
        /// `~d`: the name after the `~`.
        case test(String)
        /// A value or a bare word (quotes taken off).
        case word(String)
    }

    private struct Token {
        var kind: Kind
        /// Where it starts (0-based, in characters) and how many characters it spans.
        var start: Int
        var length: Int
    }

    private let characters: [Character]
    private var tokens: [Token] = []
    private var next = 0

    init(_ text: String) {
        characters = Array(text)
    }

    mutating func parse() throws(FlowFilterError) -> FlowFilter {
        tokens = try tokenize()
        guard !tokens.isEmpty else { throw FlowFilterError(message: "the filter is empty", column: 1, length: 0) }
        let filter = try parseOr()
        if let extra = peek {
            throw extra.kind == .close
                ? problem("this ) closes no (", at: extra)
                : problem("unexpected \(describe(extra))", at: extra)
        }
        return filter
    }

    // MARK: grammar

    private mutating func parseOr() throws(FlowFilterError) -> FlowFilter {
        var filter = try parseAnd()
        while let token = peek, token.kind == .or {
            next += 1
            guard startsFilter(peek) else { throw missingOperand(after: token, "|") }
            filter = .or(filter, try parseAnd())
        }
        return filter
    }

    private mutating func parseAnd() throws(FlowFilterError) -> FlowFilter {
        var filter = try parseUnary()
        while let token = peek {
            if token.kind == .and {
                next += 1
                guard startsFilter(peek) else { throw missingOperand(after: token, "&") }
            } else if !startsFilter(token) {
                break
            }
            filter = .and(filter, try parseUnary())
        }
        return filter
    }

    private mutating func parseUnary() throws(FlowFilterError) -> FlowFilter {
        guard let token = peek else {
            throw FlowFilterError(message: "a filter is missing at the end", column: characters.count + 1, length: 0)
        }
        switch token.kind {
        case .not:
            next += 1
            guard startsFilter(peek) else { throw missingOperand(after: token, "!") }
            return .not(try parseUnary())
        case .open:
            next += 1
            if let inside = peek, inside.kind == .close { throw problem("( has nothing inside", at: token) }
            let filter = try parseOr()
            guard let close = peek, close.kind == .close else { throw problem("this ( is not closed", at: token) }
            next += 1
            return filter
        case .test(let name):
            next += 1
            return .test(try parseTest(name, token))
        case .word(let word):
            next += 1
            return .text(word)
        case .and, .or:
            throw problem("\(describe(token)) needs a filter before it", at: token)
        case .close:
            throw problem("this ) closes no (", at: token)
        }
    }

    private mutating func parseTest(_ name: String, _ token: Token) throws(FlowFilterError) -> FlowFilter.Test {
        guard let known = FlowFilter.tests.first(where: { $0.name == name.lowercased() }) else {
            let names = FlowFilter.tests.map { "~" + $0.name }.joined(separator: " ")
            throw problem("unknown filter ~\(name); known: \(names)", at: token)
        }
        guard known.takesValue else { return known.make("")! }
        guard let value = peek, case .word(let text) = value.kind else {
            throw problem(
                "~\(known.name) needs a value after it, as in ~\(known.name) \(Self.example(known.name))", at: token)
        }
        next += 1
        guard let test = known.make(text) else {
            throw problem(
                "~\(known.name) takes a status code (404) or a class of them (4xx), not \"\(text)\"", at: value)
        }
        return test
    }

    private static func example(_ name: String) -> String {
        switch name {
        case "d": "example.com"
        case "m": "POST"
        case "c": "404"
        case "u": "/api/"
        case "h", "hq", "hs": "\"content-type: json\""
        case "t", "tq", "ts": "json"
        default: "token"
        }
    }

    // MARK: tokens

    private var peek: Token? { next < tokens.count ? tokens[next] : nil }

    private func startsFilter(_ token: Token?) -> Bool {
        switch token?.kind {
        case .open?, .not?, .test?, .word?: true
        default: false
        }
    }

    private func describe(_ token: Token) -> String {
        switch token.kind {
        case .open: "("
        case .close: ")"
        case .not: "!"
        case .and: "&"
        case .or: "|"
        case .test(let name): "~" + name
        case .word(let word): "\"\(word)\""
        }
    }

    private func missingOperand(after token: Token, _ symbol: String) -> FlowFilterError {
        problem("\(symbol) needs a filter after it", at: token)
    }

    private func problem(_ message: String, at token: Token) -> FlowFilterError {
        FlowFilterError(message: message, column: token.start + 1, length: token.length)
    }

    private func tokenize() throws(FlowFilterError) -> [Token] {
        var tokens: [Token] = []
        var index = 0
        let symbols: [Character: Kind] = ["(": .open, ")": .close, "!": .not, "&": .and, "|": .or]
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                index += 1
            } else if let kind = symbols[character] {
                tokens.append(Token(kind: kind, start: index, length: 1))
                index += 1
            } else if character == "~" {
                var end = index + 1
                while end < characters.count, characters[end].isLetter { end += 1 }
                guard end > index + 1 else {
                    throw FlowFilterError(
                        message: "~ needs a filter name after it (~d, ~m, ~c, ~b, ...)", column: index + 1, length: 1)
                }
                tokens.append(
                    Token(kind: .test(String(characters[(index + 1)..<end])), start: index, length: end - index))
                index = end
            } else if character == "\"" || character == "'" {
                var end = index + 1
                var value = ""
                while end < characters.count, characters[end] != character {
                    if characters[end] == "\\", end + 1 < characters.count { end += 1 }
                    value.append(characters[end])
                    end += 1
                }
                guard end < characters.count else {
                    throw FlowFilterError(message: "this quote is not closed", column: index + 1, length: 1)
                }
                tokens.append(Token(kind: .word(value), start: index, length: end + 1 - index))
                index = end + 1
            } else {
                var end = index
                while end < characters.count, !characters[end].isWhitespace, !"()&|".contains(characters[end]) {
                    end += 1
                }
                tokens.append(Token(kind: .word(String(characters[index..<end])), start: index, length: end - index))
                index = end
            }
        }
        return tokens
    }
}
