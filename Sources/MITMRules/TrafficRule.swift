import MITMCore

/// One QA rule: which requests it covers, and what it does to them (answer locally, send elsewhere,
/// rewrite, delay, break) or to the connections of its hosts (throttle).
public struct TrafficRule: Sendable, Equatable {
    /// How the rule is named in the log, events, the HAR's `_rule` and the report.
    public var name: String
    /// The requests it covers.
    public var pattern: URLPattern
    /// Methods it covers (uppercase); empty for every method.
    public var methods: [String]
    /// What it does.
    public var actions: RuleActions

    /// A rule named `name`.
    public init(name: String, pattern: URLPattern, methods: [String] = [], actions: RuleActions) {
        self.name = name
        self.pattern = pattern
        self.methods = methods.map { $0.uppercased() }
        self.actions = actions
    }

    /// Whether the rule covers a request with `facts`.
    public func covers(_ facts: RequestFacts) -> Bool {
        (methods.isEmpty || methods.contains(facts.method)) && pattern.matches(facts)
    }
}

/// What a rule does. A rule may combine request actions (a delay and a status, say); `throttle` stands alone.
public struct RuleActions: Sendable, Equatable {
    /// Answer from this file, or from this directory (the path after the pattern's prefix names the file).
    public var mapLocal: String?
    /// Send the request to another origin.
    public var mapRemote: RemoteTarget?
    /// Answer with a fixed response, without contacting the upstream.
    public var respond: FixedResponse?
    /// Headers set and removed on the request before it goes upstream.
    public var requestHeaders = HeaderEdits()
    /// Headers set and removed on the response before it goes to the client.
    public var responseHeaders = HeaderEdits()
    /// The response's status replaced.
    public var status: Int?
    /// The response's body replaced by this file's bytes.
    public var bodyFile: String?
    /// Seconds to wait before the request is handled (so before the response starts).
    public var delay: Double?
    /// Break the connection instead of (or in the middle of) answering.
    public var fault: RuleFault?
    /// Network conditions for every connection to the rule's hosts.
    public var throttle: NetworkConditions?
    /// Pause matching requests and/or responses until the web UI continues or aborts them.
    public var breakpoint: Breakpoint?

    /// No action.
    public init() {}

    /// The longest `delay` a rule may give, in seconds: a day.
    public static let longestDelay: Double = 86_400

    /// `seconds` (written `text`) as a delay, or why the proxy cannot schedule it.
    static func delay(_ seconds: Double, written text: String) throws(RuleError) -> Double {
        guard seconds <= longestDelay else {
            throw RuleError(
                "delay \"\(text)\" is outside what can be scheduled: a delay must be between 0ms and 1440m (a day)")
        }
        return seconds
    }

    /// Whether the rule answers requests itself (no upstream is involved).
    public var answersLocally: Bool {
        mapLocal != nil || respond != nil || fault?.isBeforeHeaders == true
    }
}

/// Where `mapRemote` sends requests: `https://staging.example.com:8443/v2` replaces the scheme, host and
/// port, and the pattern's path prefix by `/v2`.
public struct RemoteTarget: Sendable, Equatable, CustomStringConvertible {
    public var scheme: String
    public var host: String
    public var port: Int
    /// Replaces the pattern's literal path prefix.
    public var pathPrefix: String

    /// Parses an absolute `http` or `https` URL without query or fragment.
    public init(parsing text: String) throws(RuleError) {
        let url: AbsoluteURL
        do {
            guard case .absolute(let parsed) = try RequestTarget.parse(text, method: "GET") else {
                throw RuleError(
                    "map-remote target \"\(text)\" is not an absolute URL like https://staging.example.com/")
            }
            url = parsed
        } catch let error as RuleError {
            throw error
        } catch {
            throw RuleError("map-remote target \"\(text)\" is not a usable URL: \(error)")
        }
        guard !url.pathAndQuery.contains("?") else {
            throw RuleError("map-remote target \"\(text)\" has a query; give the origin and an optional path prefix")
        }
        scheme = url.scheme
        host = url.host
        port = url.port
        pathPrefix = url.pathAndQuery
    }

    public var description: String {
        AbsoluteURL(scheme: scheme, host: host, port: port, pathAndQuery: pathPrefix).text
    }
}

/// A response a rule answers with itself.
public struct FixedResponse: Sendable, Equatable {
    public var status: Int
    /// Body text; ignored when `bodyFile` is set.
    public var body: String?
    /// A file whose bytes are the body.
    public var bodyFile: String?
    /// Extra headers.
    public var headers: [HTTPHeaderField]

    /// A response with `status` and an optional body.
    public init(status: Int, body: String? = nil, bodyFile: String? = nil, headers: [HTTPHeaderField] = []) {
        self.status = status
        self.body = body
        self.bodyFile = bodyFile
        self.headers = headers
    }
}

/// How a rule breaks a connection.
public enum RuleFault: String, Sendable, Equatable, CaseIterable {
    /// FIN instead of a response (no upstream contacted).
    case closeBeforeHeaders = "close-before-headers"
    /// RST instead of a response (no upstream contacted).
    case resetBeforeHeaders = "reset-before-headers"
    /// The response head, then FIN instead of the body.
    case closeAfterHeaders = "close-after-headers"
    /// The response head, then RST instead of the body.
    case resetAfterHeaders = "reset-after-headers"

    /// Whether the client gets no response head at all.
    public var isBeforeHeaders: Bool { self == .closeBeforeHeaders || self == .resetBeforeHeaders }
    /// Whether the connection is reset rather than closed.
    public var isReset: Bool { self == .resetBeforeHeaders || self == .resetAfterHeaders }

    /// Parses one of the names.
    public init(parsing text: String) throws(RuleError) {
        guard let fault = RuleFault(rawValue: text.lowercased()) else {
            throw RuleError(
                "unknown fault \"\(text)\": use \(RuleFault.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = fault
    }
}

/// Headers to set (replacing any of the same name) and to remove.
public struct HeaderEdits: Sendable, Equatable {
    public var setFields: [HTTPHeaderField] = []
    public var removeNames: [String] = []

    /// No edit.
    public init(setFields: [HTTPHeaderField] = [], removeNames: [String] = []) {
        self.setFields = setFields
        self.removeNames = removeNames
    }

    public var isEmpty: Bool { setFields.isEmpty && removeNames.isEmpty }

    /// Applies the edits: removals first, then the values set.
    public func apply(to headers: inout HTTPHeaders) {
        for name in removeNames { headers.remove(name) }
        for field in setFields { headers.replaceOrAdd(name: field.name, value: field.value) }
    }

    /// `other`'s edits after these.
    public mutating func append(_ other: HeaderEdits) {
        setFields += other.setFields
        removeNames += other.removeNames
    }
}
