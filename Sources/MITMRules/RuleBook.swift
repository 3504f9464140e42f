import MITMCore

/// The rules in force, in order (flags first, then the rules file), and the one decision per request
/// they make. Every covering rule applies; when two want the same thing (two answers, two delays, two
/// statuses) the earlier one wins; header edits add up.
package struct RuleBook: Sendable, Equatable {
    /// Every rule, in order.
    package var rules: [TrafficRule]

    /// A book of `rules`.
    package init(_ rules: [TrafficRule] = []) {
        self.rules = rules
    }

    /// Whether any rule acts on requests (not only on connections).
    package var hasRequestRules: Bool { rules.contains { $0.actions.throttle == nil } }

    /// What the rules do to a request with `facts`.
    package func decide(_ facts: RequestFacts) -> RuleDecision {
        var decision = RuleDecision()
        for rule in rules where rule.actions.throttle == nil && rule.covers(facts) {
            if apply(rule, to: &decision, facts: facts) { decision.rules.append(rule.name) }
        }
        if decision.answer != nil { decision.remote = nil }
        return decision
    }

    /// Adds what `rule` does that no earlier rule already decided; whether it added anything.
    private func apply(_ rule: TrafficRule, to decision: inout RuleDecision, facts: RequestFacts) -> Bool {
        let actions = rule.actions
        var added = false
        if decision.answer == nil {
            if let root = actions.mapLocal {
                decision.answer = .mapLocal(root: root, remainder: rule.pattern.remainder(of: facts), rule: rule.name)
                added = true
            } else if let fixed = actions.respond {
                decision.answer = .fixed(fixed, rule: rule.name)
                added = true
            } else if let fault = actions.fault, fault.isBeforeHeaders {
                decision.answer = .fault(fault, rule: rule.name)
                added = true
            }
        }
        if let target = actions.mapRemote, decision.remote == nil, decision.answer == nil {
            decision.remote = Self.remote(target, pattern: rule.pattern, facts: facts, rule: rule.name)
            added = true
        }
        if !actions.requestHeaders.isEmpty {
            decision.requestHeaders.append(actions.requestHeaders)
            added = true
        }
        if !actions.responseHeaders.isEmpty {
            decision.responseHeaders.append(actions.responseHeaders)
            added = true
        }
        if let status = actions.status, decision.status == nil {
            decision.status = status
            added = true
        }
        if let file = actions.bodyFile, decision.bodyFile == nil {
            decision.bodyFile = file
            added = true
        }
        if let delay = actions.delay, decision.delay == nil {
            decision.delay = delay
            added = true
        }
        if let breakpoint = actions.breakpoint, decision.breakpoint == nil {
            decision.breakpoint = (breakpoint, rule.name)
            added = true
        }
        if let fault = actions.fault, !fault.isBeforeHeaders, decision.faultAfterHeaders == nil {
            decision.faultAfterHeaders = fault
            added = true
        }
        return added
    }

    /// The mapped request: the pattern's literal path prefix replaced by the target's.
    static func remote(_ target: RemoteTarget, pattern: URLPattern, facts: RequestFacts, rule: String)
        -> RuleDecision.Remote
    {
        let prefix = pattern.literalPrefix
        let path = facts.path
        var rest =
            path.utf8.starts(with: prefix.utf8)
            ? String(decoding: path.utf8.dropFirst(prefix.utf8.count), as: UTF8.self) : path
        var base = target.pathPrefix
        if base.hasSuffix("/") && rest.hasPrefix("/") { rest.removeFirst() }
        if !base.hasSuffix("/") && !rest.isEmpty && !rest.hasPrefix("/") { base += "/" }
        var mapped = base + rest
        if mapped.isEmpty { mapped = "/" }
        return RuleDecision.Remote(
            scheme: target.scheme, host: target.host, port: target.port, target: mapped + facts.query, rule: rule)
    }

    /// The network conditions for a connection to `host`, and the rule that sets them: the most specific host
    /// pattern decides, the later of two equally specific ones.
    package func conditions(forHost host: String) -> (conditions: NetworkConditions, rule: String)? {
        var best: (specificity: Int, conditions: NetworkConditions, rule: String)?
        for rule in rules {
            guard let conditions = rule.actions.throttle, rule.pattern.host.matches(host) else { continue }
            let specificity = rule.pattern.host.specificity
            if best == nil || specificity >= best!.specificity { best = (specificity, conditions, rule.name) }
        }
        return best.map { ($0.conditions, $0.rule) }
    }

    /// Whether a rule may send requests for `host` to another origin: such hosts are relayed as HTTP/1.1,
    /// where each request can go to its own upstream.
    package func mayMapRemote(host: String) -> Bool {
        rules.contains { $0.actions.mapRemote != nil && $0.pattern.host.matches(host) }
    }

    /// The rule that answers every request to `host` itself (a local answer for every path, scheme and method),
    /// if one does: such a host's upstream is never contacted.
    package func answersEveryRequest(host: String, scheme: String) -> String? {
        for rule in rules where rule.actions.throttle == nil && rule.pattern.host.matches(host) {
            let coversAll =
                rule.methods.isEmpty && rule.pattern.path == "/" && (rule.pattern.scheme ?? scheme) == scheme
            if coversAll && rule.actions.answersLocally { return rule.name }
        }
        return nil
    }
}
