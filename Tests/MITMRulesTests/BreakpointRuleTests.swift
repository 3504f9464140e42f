import MITMCore
import MITMRules
import Testing

/// `breakpoint:` in a rules file, and the decision it makes.
@Suite struct BreakpointRuleTests {
    private func map(_ entries: [(String, RuleFileValue)]) -> RuleFileValue {
        .map(entries.map { (key: $0.0, value: $0.1) })
    }
    private func rules(_ items: [RuleFileValue]) throws(RuleError) -> [TrafficRule] {
        try RuleFile.rules(from: map([("rules", .list(items))]), fileName: "qa.yaml", baseDirectory: "/")
    }

    @Test func aBreakpointRulePausesRequestsWithItsTimeout() throws {
        let read = try rules([
            map([
                ("name", .scalar("checkout")), ("match", .scalar("api.test/checkout")), ("method", .scalar("POST")),
                ("breakpoint", map([("at", .scalar("request")), ("timeout", .scalar("30s"))])),
            ]),
            map([("match", .scalar("api.test/cart")), ("breakpoint", .scalar("request"))]),
        ])
        #expect(read[0].actions.breakpoint == Breakpoint(request: true, response: false, timeout: 30))
        #expect(
            read[1].actions.breakpoint == Breakpoint(request: true, response: false, timeout: Breakpoint.defaultTimeout)
        )
        let decision = RuleBook(read).decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: "POST", target: "/checkout"))
        #expect(decision.breakpoint?.0 == Breakpoint(request: true, response: false, timeout: 30))
        #expect(decision.breakpoint?.rule == "checkout")
        #expect(decision.rules == ["checkout"])
        #expect(
            RuleBook(read).decide(
                RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/checkout")
            ).isEmpty)
    }

    @Test func responseAndBothBreakpointsAreRead() throws {
        let read = try rules([
            map([("match", .scalar("api.test/a")), ("breakpoint", .scalar("response"))]),
            map([
                ("match", .scalar("api.test/b")),
                ("breakpoint", map([("at", .scalar("both")), ("timeout", .scalar("2m"))])),
            ]),
        ])
        #expect(read[0].actions.breakpoint == Breakpoint(request: false, response: true))
        #expect(read[1].actions.breakpoint == Breakpoint(request: true, response: true, timeout: 120))
    }

    @Test func mistakesInABreakpointAreNamed() {
        let cases: [(RuleFileValue, String)] = [
            (
                map([("match", .scalar("a.test")), ("breakpoint", .scalar("sometimes"))]),
                "breakpoint \"sometimes\" is not one of request, response, both"
            ),
            (
                map([
                    ("match", .scalar("a.test")),
                    ("breakpoint", map([("at", .scalar("request")), ("timeout", .scalar("forever"))])),
                ]),
                "breakpoint.timeout \"forever\" is not a duration"
            ),
            (
                map([("match", .scalar("a.test")), ("breakpoint", map([("where", .scalar("request"))]))]),
                "unknown key \"breakpoint.where\""
            ),
        ]
        for (rule, expected) in cases {
            do {
                _ = try rules([rule])
                Issue.record("accepted \(rule)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }
}
