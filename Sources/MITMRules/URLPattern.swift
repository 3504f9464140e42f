import MITMCore

/// Which requests a rule covers: `[scheme://]HOST[/PATH]`, where HOST is an `--expect` host pattern
/// (`api.example.com`, `*.example.com`, `*`) and PATH is a prefix (`/v1` covers `/v1`, `/v1/items` and
/// `/v1?x`, not `/v10`) or, with `*`, a glob over the whole path (`/v1/*/avatar.png`; `*` also
/// crosses `/`). A PATH with `?` is matched against the path and the query. No port: a pattern covers
/// every port of its hosts.
public struct URLPattern: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`, or nil for both.
    public let scheme: String?
    /// The hosts.
    public let host: HostPattern
    /// The path pattern, starting with `/`.
    public let path: String

    /// Parses `[scheme://]HOST[/PATH]`.
    public init(parsing text: String) throws(RuleError) {
        var rest = Substring(text)
        if let range = rest.range(of: "://") {
            let scheme = rest[..<range.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw RuleError("URL pattern \"\(text)\": the scheme must be http or https, not \"\(scheme)\"")
            }
            self.scheme = scheme
            rest = rest[range.upperBound...]
        } else {
            scheme = nil
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let hostText = String(rest[..<slash])
        do {
            host = try HostPattern(hostText.isEmpty ? "*" : hostText)
        } catch {
            throw RuleError("URL pattern \"\(text)\": \(error)")
        }
        let pathText = rest[slash...]
        path = pathText.isEmpty ? "/" : String(pathText)
        if let bad = path.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw RuleError(
                "URL pattern \"\(text)\": the path contains a space or control character (U+\(String(bad.value, radix: 16)))"
            )
        }
    }

    /// A pattern from parts already checked.
    public init(scheme: String?, host: HostPattern, path: String) {
        self.scheme = scheme
        self.host = host
        self.path = path.hasPrefix("/") ? path : "/" + path
    }

    public var description: String {
        (scheme.map { "\($0)://" } ?? "") + host.description + (path == "/" ? "" : path)
    }

    /// Whether the pattern's path is a glob.
    public var isGlob: Bool { path.contains("*") }

    /// The literal part of the path before any `*`: what a mapping replaces.
    public var literalPrefix: String {
        path.firstIndex(of: "*").map { String(path[..<$0]) } ?? path
    }

    /// Whether a request with `facts` is covered.
    public func matches(_ facts: RequestFacts) -> Bool {
        if let scheme, scheme != facts.scheme { return false }
        guard host.matches(facts.host) else { return false }
        let subject = path.contains("?") ? facts.target : facts.path
        if isGlob { return Self.glob(Array(path.utf8)[...], Array(subject.utf8)[...]) }
        return Self.isPrefix(path, of: subject)
    }

    /// What follows the pattern's literal prefix in the request's path (`/v1` and `/v1/a/b.json` give `a/b.json`),
    /// without leading slashes; for mapping to a directory or another origin.
    public func remainder(of facts: RequestFacts) -> String {
        let prefix = literalPrefix
        let path = facts.path
        guard path.utf8.starts(with: prefix.utf8) else { return "" }
        return String(decoding: path.utf8.dropFirst(prefix.utf8.count).drop { $0 == UInt8(ascii: "/") }, as: UTF8.self)
    }

    /// `/v1` is a prefix of `/v1`, `/v1/x` and `/v1?q`, not of `/v10`; `/v1/` and `/` are prefixes of everything they start.
    static func isPrefix(_ prefix: String, of subject: String) -> Bool {
        guard subject.utf8.starts(with: prefix.utf8) else { return false }
        if prefix.hasSuffix("/") || subject.utf8.count == prefix.utf8.count { return true }
        let next = subject.utf8[subject.utf8.index(subject.utf8.startIndex, offsetBy: prefix.utf8.count)]
        return next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
    }

    /// `*` matches any run of bytes, `/` included; everything else matches itself.
    static func glob(_ pattern: ArraySlice<UInt8>, _ subject: ArraySlice<UInt8>) -> Bool {
        var p = pattern.startIndex
        var s = subject.startIndex
        var star: Int?
        var resume = subject.startIndex
        while s < subject.endIndex {
            if p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") {
                star = p
                p += 1
                resume = s
            } else if p < pattern.endIndex && pattern[p] == subject[s] {
                p += 1
                s += 1
            } else if let star {
                p = star + 1
                resume += 1
                s = resume
            } else {
                return false
            }
        }
        while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }
}
