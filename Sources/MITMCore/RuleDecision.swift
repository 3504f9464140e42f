/// What the rules say about one request, decided once when its head arrives. Empty when no rule covers it.
public struct RuleDecision: Sendable, Equatable {
    /// How the request is answered without its upstream, if it is.
    public enum LocalAnswer: Sendable, Equatable {
        /// From a file: `root` itself, or the file `remainder` names below the directory `root`.
        case mapLocal(root: String, remainder: String, rule: String)
        /// A fixed response.
        case fixed(FixedResponse, rule: String)
        /// No response: the connection is closed (FIN) or reset.
        case fault(RuleFault, rule: String)
    }

    /// Where a mapped request goes instead: the new origin and the request target there.
    public struct Remote: Sendable, Equatable {
        public var scheme: String
        public var host: String
        public var port: Int
        /// Path and query on the new origin.
        public var target: String
        public var rule: String

        /// The `Host` header value for the new origin.
        public var authority: String {
            AbsoluteURL(scheme: scheme, host: host, port: port, pathAndQuery: target).authority
        }
    }

    /// The names of the rules that apply, in order.
    public var rules: [String] = []
    public var answer: LocalAnswer?
    public var remote: Remote?
    public var requestHeaders = HeaderEdits()
    public var responseHeaders = HeaderEdits()
    public var status: Int?
    public var bodyFile: String?
    /// Seconds to wait before handling the request.
    public var delay: Double?
    /// A fault after the response head (one before it is an `answer`).
    public var faultAfterHeaders: RuleFault?

    /// No rule applies.
    public init() {}

    /// Whether no rule applies.
    public var isEmpty: Bool { rules.isEmpty }

    /// Whether the response from upstream (or the local answer) is changed on its way to the client.
    public var rewritesResponse: Bool {
        !responseHeaders.isEmpty || status != nil || bodyFile != nil || faultAfterHeaders != nil
    }

    /// The rule names as one text, for the HAR's `_rule` and log lines.
    public var ruleText: String { rules.joined(separator: ", ") }
}
