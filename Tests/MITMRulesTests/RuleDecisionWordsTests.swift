import MITMCore
import MITMRules
import Testing

/// What the rules did to a request, in the words of its rule log line, as both relays write it.
@Suite struct RuleDecisionWordsTests {
    private func decision(_ actions: RuleActions) throws -> RuleDecision {
        let rule = TrafficRule(name: "r", pattern: try URLPattern(parsing: "api.test/v1"), actions: actions)
        return RuleBook([rule]).decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/v1/items?q=1"))
    }

    @Test func aDelayedMappedRequestWithEditedHeadersIsDescribedInOrder() throws {
        var actions = RuleActions()
        actions.delay = 2
        actions.mapRemote = try RemoteTarget(parsing: "https://staging.test:8443/v2")
        actions.requestHeaders = HeaderEdits(removeNames: ["Cookie"])
        let ruled = try decision(actions)
        #expect(
            ruled.requestWords(delayed: true)
                == "delayed 2s; sent to https://staging.test:8443/v2/items?q=1; request headers edited")
        #expect(
            ruled.requestWords(delayed: false)
                == "sent to https://staging.test:8443/v2/items?q=1; request headers edited")
    }

    @Test func aBreakpointsContinuationFollowsTheDelay() throws {
        var actions = RuleActions()
        actions.delay = 0.5
        let ruled = try decision(actions)
        #expect(
            ruled.requestWords(delayed: true, continuedAtBreakpoint: true) == "delayed 500ms; continued at breakpoint")
    }

    @Test func aLocalAnswerIsDescribedByItsOwnWordsAlone() throws {
        var actions = RuleActions()
        actions.respond = FixedResponse(status: 418)
        actions.requestHeaders = HeaderEdits(removeNames: ["Cookie"])
        actions.delay = 1
        let ruled = try decision(actions)
        #expect(ruled.requestWords(delayed: false, answer: "answered 418") == "answered 418")
        #expect(ruled.requestWords(delayed: true, answer: "answered 418") == "delayed 1s; answered 418")
    }

    @Test func aRequestTheRulesLeftAsItWasHasNoWords() throws {
        var actions = RuleActions()
        actions.status = 503
        #expect(try decision(actions).requestWords(delayed: true) == nil)
        actions.delay = 0
        #expect(try decision(actions).requestWords(delayed: true) == nil, "a zero delay holds nothing")
        #expect(RuleDecision().requestWords(delayed: true) == nil)
    }
}
