import MITMCore

/// What the rules say about one request, decided once when its head arrives. Empty when no rule covers it.
package struct RuleDecision: Sendable, Equatable {
    /// How the request is answered without its upstream, if it is.
    package enum LocalAnswer: Sendable, Equatable {
        /// From a file: `root` itself, or the file `remainder` names below the directory `root`.
        case mapLocal(root: String, remainder: String, rule: String)
        /// A fixed response.
        case fixed(FixedResponse, rule: String)
        /// No response: the connection is closed (FIN) or reset.
        case fault(RuleFault, rule: String)
    }

    /// Where a mapped request goes instead: the new origin and the request target there.
    package struct Remote: Sendable, Equatable {
        package var scheme: String
        package var host: String
        package var port: Int
        /// Path and query on the new origin.
        package var target: String
        package var rule: String

        /// The `Host` header value for the new origin.
        package var authority: String {
            AbsoluteURL(scheme: scheme, host: host, port: port, pathAndQuery: target).authority
        }
    }

    /// The names of the rules that apply, in order.
    package var rules: [String] = []
    package var answer: LocalAnswer?
    package var remote: Remote?
    package var requestHeaders = HeaderEdits()
    package var responseHeaders = HeaderEdits()
    package var status: Int?
    package var bodyFile: String?
    /// Seconds to wait before handling the request.
    package var delay: Double?
    /// A fault after the response head (one before it is an `answer`).
    package var faultAfterHeaders: RuleFault?
    /// Where the exchange pauses for the web UI, and the rule that says so.
    package var breakpoint: (Breakpoint, rule: String)? {
        get { breakpointRule.map { ($0.breakpoint, $0.rule) } }
        set { breakpointRule = newValue.map { BreakpointRule(breakpoint: $0.0, rule: $0.rule) } }
    }
    private var breakpointRule: BreakpointRule?

    /// No rule applies.
    package init() {}

    /// Whether no rule applies.
    package var isEmpty: Bool { rules.isEmpty }

    /// Whether the response from upstream (or the local answer) is changed on its way to the client.
    package var rewritesResponse: Bool {
        !responseHeaders.isEmpty || status != nil || bodyFile != nil || faultAfterHeaders != nil
    }

    /// The rule names as one text, for the HAR's `_rule` and log lines.
    package var ruleText: String { rules.joined(separator: ", ") }
}

/// A breakpoint and the rule that set it (a struct, so that the decision stays `Equatable`).
private struct BreakpointRule: Sendable, Equatable {
    var breakpoint: Breakpoint
    var rule: String
}
