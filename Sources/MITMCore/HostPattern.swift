/// A host name pattern for `--expect` rules and host filters: `example.com`, `*.example.com` (subdomains at
/// any depth) or `*`; and, made in code only, the one-level form ATS `NSIncludesSubdomains` means (see
/// `oneLevel(below:)`).
///
/// Matching ignores ASCII case, a trailing dot on either side, and the brackets around an IPv6 literal.
public struct HostPattern: Sendable, Equatable, CustomStringConvertible {
    private enum Kind: Sendable, Equatable {
        case any
        case exact(String)
        case subdomains(of: String)
        case oneLevelBelow(String)
    }

    private let kind: Kind

    /// Parses `text`, rejecting anything that is not a host name, an IP literal, `*.` followed by one, or `*`.
    public init(_ text: String) throws(HostPatternError) {
        guard !text.isEmpty else { throw .empty }
        guard text.unicodeScalars.allSatisfy(\.isASCII) else { throw .nonASCII(text) }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { throw .whitespace(text) }
        if text == "*" {
            kind = .any
            return
        }
        let isWildcard = text.hasPrefix("*.")
        if !text.contains("/"), Self.hasPort(isWildcard ? String(text.dropFirst(2)) : text) { throw .port(text) }
        let host = Self.normalized(isWildcard ? String(text.dropFirst(2)) : text)
        if host.contains("*") { throw .misplacedWildcard(text) }
        if let invalid = host.first(where: { !Self.isHostCharacter($0) }) {
            throw .invalidCharacter(invalid, in: text)
        }
        if !host.contains(":")
            && host.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
        {
            throw .emptyLabel(text)
        }
        kind = isWildcard ? .subdomains(of: host) : .exact(host)
    }

    /// Subdomains exactly one label below `parent`: ATS `NSIncludesSubdomains` on `example.org` covers
    /// `math.example.org` but not `advanced.math.example.org`. Written `*.example.org (one level)`.
    public static func oneLevel(below parent: HostPattern) -> HostPattern? {
        guard case .exact(let name) = parent.kind else { return nil }
        return HostPattern(kind: .oneLevelBelow(name))
    }

    private init(kind: Kind) { self.kind = kind }

    /// Parses `description` back, the one-level form included (as recorded in a report).
    public init(recorded text: String) throws(HostPatternError) {
        guard text.hasSuffix(Self.oneLevelSuffix), text.hasPrefix("*.") else {
            try self.init(text)
            return
        }
        let parent = try HostPattern(String(text.dropFirst(2).dropLast(Self.oneLevelSuffix.count)))
        guard let pattern = Self.oneLevel(below: parent) else { throw .misplacedWildcard(text) }
        self = pattern
    }

    private static let oneLevelSuffix = " (one level)"

    /// Whether `host` (a CONNECT authority host, SNI or Host header value, without port) matches.
    public func matches(_ host: String) -> Bool {
        switch kind {
        case .any:
            return true
        case .exact(let name):
            return Self.normalized(host) == name
        case .subdomains(of: let parent):
            let candidate = Self.normalized(host)
            return candidate.count > parent.count + 1 && candidate.hasSuffix("." + parent)
        case .oneLevelBelow(let parent):
            let candidate = Self.normalized(host)
            guard candidate.count > parent.count + 1, candidate.hasSuffix("." + parent) else { return false }
            return !candidate.dropLast(parent.count + 1).contains(".")
        }
    }

    /// How narrowly the pattern picks hosts: an exact name beats `*.a.example`, which beats `*.example`,
    /// which beats `*`. When several expectations match a host, the most specific decides for it.
    public var specificity: Int {
        switch kind {
        case .any: 0
        case .subdomains(of: let parent), .oneLevelBelow(let parent): 1 + parent.split(separator: ".").count
        case .exact: Int.max
        }
    }

    /// Whether the pattern is one host name or address, not a wildcard.
    public var isExactName: Bool {
        if case .exact = kind { return true }
        return false
    }

    /// A host the pattern matches that no exact name in a host list is likely to be: the name itself for an
    /// exact pattern, an unremarkable subdomain for a wildcard. Lets a policy be asked about a whole pattern.
    public var representativeHost: String {
        switch kind {
        case .any: "any-host"
        case .exact(let name): name
        case .subdomains(of: let parent), .oneLevelBelow(let parent): "any-host." + parent
        }
    }

    /// `host:port` or `[v6]:port`; a bare IPv6 literal has two colons or more.
    private static func hasPort(_ text: String) -> Bool {
        if text.hasPrefix("[") { return text.contains("]:") }
        return text.filter { $0 == ":" }.count == 1
    }

    /// The pattern in canonical form: lowercase, without a trailing dot or IPv6 brackets.
    public var description: String {
        switch kind {
        case .any: "*"
        case .exact(let name): name
        case .subdomains(of: let parent): "*." + parent
        case .oneLevelBelow(let parent): "*." + parent + Self.oneLevelSuffix
        }
    }

    private static func normalized(_ host: String) -> String {
        var host = Substring(host.lowercased())
        if host.hasPrefix("["), host.hasSuffix("]"), host.count >= 2 {
            host = host.dropFirst().dropLast()
        }
        if host.hasSuffix(".") {
            host = host.dropLast()
        }
        return String(host)
    }

    private static func isHostCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || "-_.:".contains(character)
    }
}

/// Why a host pattern was rejected.
public enum HostPatternError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern is empty.
    case empty
    /// The pattern contains a space or control character.
    case whitespace(String)
    /// The pattern contains non-ASCII characters (write internationalised names in punycode).
    case nonASCII(String)
    /// A `*` appears somewhere other than as the whole pattern or as the leading `*.`.
    case misplacedWildcard(String)
    /// The pattern contains a character that cannot appear in a host name or IP literal.
    case invalidCharacter(Character, in: String)
    /// The pattern has an empty label, as in `a..example` or `.example`.
    case emptyLabel(String)
    /// The pattern carries a port, as in `api.example.com:443`.
    case port(String)

    /// A human reason naming the pattern.
    public var description: String {
        switch self {
        case .empty:
            "host pattern is empty"
        case .whitespace(let text):
            "host pattern \(text.debugDescription) contains a space or control character"
        case .nonASCII(let text):
            "host pattern \(text.debugDescription) contains non-ASCII characters; write internationalised names in punycode (xn--...)"
        case .misplacedWildcard(let text):
            "host pattern \(text.debugDescription) has a misplaced \"*\"; use \"*\" alone or as the first label, as in \"*.example.com\""
        case .invalidCharacter(let character, in: let text):
            "host pattern \(text.debugDescription) contains \(String(character).debugDescription), which cannot appear in a host name; give a host, not a URL"
        case .emptyLabel(let text):
            "host pattern \(text.debugDescription) has an empty label"
        case .port(let text):
            "host pattern \(text.debugDescription) has a port; give the host alone (a pattern covers every port of the host)"
        }
    }
}
