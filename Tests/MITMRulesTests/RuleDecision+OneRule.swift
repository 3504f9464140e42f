import MITMCore
import MITMRules

extension RuleDecision {
    /// The decision of one rule `r` with `actions` on `api.test/v1` for a `method` request of `/v1/items`.
    static func ofOneRule(_ actions: RuleActions, method: String = "GET") throws -> RuleDecision {
        let rule = TrafficRule(name: "r", pattern: try URLPattern(parsing: "api.test/v1"), actions: actions)
        return RuleBook([rule]).decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: method, target: "/v1/items"))
    }
}
