/// A breakpoint rule's action: where matching exchanges pause until the web UI continues (perhaps edited) or aborts
/// them, and how long a pause may last before the proxy aborts it itself.
public struct Breakpoint: Sendable, Equatable {
    /// Pause the request before it goes upstream.
    public var request: Bool
    /// Pause the response head before it goes to the client.
    public var response: Bool
    /// Seconds a pause may last; then the exchange is aborted with a 504 that says so.
    public var timeout: Double

    /// Five minutes: long enough to read and edit a request, short enough that a forgotten pause ends.
    public static let defaultTimeout: Double = 300

    /// A breakpoint on requests and/or responses.
    public init(request: Bool, response: Bool, timeout: Double = Breakpoint.defaultTimeout) {
        self.request = request
        self.response = response
        self.timeout = timeout
    }

    /// Whether it pauses at `phase`.
    public func pauses(at phase: BreakpointPhase) -> Bool {
        phase == .request ? request : response
    }

    /// Parses `request`, `response` or `both` (the phases it pauses at).
    public init(phases text: String, timeout: Double = Breakpoint.defaultTimeout) throws(RuleError) {
        switch text.lowercased() {
        case "request": self.init(request: true, response: false, timeout: timeout)
        case "response": self.init(request: false, response: true, timeout: timeout)
        case "both", "true": self.init(request: true, response: true, timeout: timeout)
        default: throw RuleError("breakpoint \"\(text)\" is not one of request, response, both")
        }
    }

    /// `request`, `response` or `both`.
    public var phasesText: String { request && response ? "both" : request ? "request" : "response" }
}

/// Where an exchange pauses.
public enum BreakpointPhase: String, Sendable, Equatable, Codable {
    /// Its request head arrived; nothing went upstream yet.
    case request
    /// Its response head arrived from upstream; nothing went to the client yet.
    case response
}

/// What the web UI changes in a paused exchange before it continues; nil fields stay as they are.
public struct BreakpointEdit: Sendable, Equatable, Codable {
    /// The request's method (request phase).
    public var method: String?
    /// The request's URL (request phase): on an intercepted connection only its path and query may change.
    public var url: String?
    /// The status (response phase).
    public var status: Int?
    /// Every header, replacing the ones the exchange had, as `[name, value]` pairs. The framing headers
    /// (`Content-Length`, `Transfer-Encoding`) stay the exchange's: the relay sets them for the body it sends.
    public var headers: [[String]]?
    /// The whole body, replacing the paused phase's (only a complete body the web UI was shown can be replaced).
    public var body: String?

    /// An edit of the given fields.
    public init(
        method: String? = nil, url: String? = nil, status: Int? = nil, headers: [[String]]? = nil, body: String? = nil
    ) {
        self.method = method
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Why the edit cannot be applied, or nil when it can: header names must be tokens and values single lines.
    public var problem: String? {
        if let method, method.isEmpty || !HTTPSyntax.isToken(method.utf8) {
            return "method \"\(method)\" is not an HTTP method"
        }
        if let status, !(100...599).contains(status) { return "status \(status) is not between 100 and 599" }
        for pair in headers ?? [] {
            guard pair.count == 2, !pair[0].isEmpty, HTTPSyntax.isToken(pair[0].utf8) else {
                return "header \(pair.first.map { "\"\($0)\"" } ?? "[]") is not a [name, value] pair with a valid name"
            }
            guard pair[1].utf8.allSatisfy({ ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }) else {
                return "the value of header \(pair[0]) contains a line break or control character"
            }
        }
        return nil
    }

    /// The headers as fields, when the edit replaces them.
    public var headerFields: HTTPHeaders? {
        guard let headers else { return nil }
        var fields = HTTPHeaders()
        for pair in headers where pair.count == 2 { fields.add(name: pair[0], value: pair[1]) }
        return fields
    }
}
