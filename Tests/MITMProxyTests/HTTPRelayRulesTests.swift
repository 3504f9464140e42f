import MITMRules
import Testing

@testable import MITMProxy

/// The HTTP/1 relay's rules state is allocated only when a rule concerns the connection, and given back at rest.
@Suite struct HTTPRelayRulesTests {
    private let route = UpstreamRoute(scheme: "https", host: "www.origin.test", port: 8443)

    @Test func aRelayNoRuleConcernsHoldsNoStateAndReadsTheInitialValues() {
        var rules = HTTPRelayRules()
        rules.pending = nil
        rules.route = nil
        rules.breakpoint = nil
        rules.heldResponse = nil
        rules.delayTimer = nil
        rules.sender = nil
        #expect(!rules.holdsState)
        #expect(rules.pending == nil && rules.route == nil && rules.breakpoint == nil && rules.heldResponse == nil)
        #expect(rules.exchange == RuledExchange(streams: false), "as a new relay's: before any request head")
        #expect(!rules.filePump.isRunning)
    }

    @Test func aDecisionAllocatesTheStateAndRestGivesItBack() {
        var rules = HTTPRelayRules()
        rules.pending = RuleDecision()
        #expect(rules.holdsState && rules.pending == RuleDecision())
        rules.releaseAtRest()
        #expect(rules.holdsState, "a pending decision is kept")
        rules.pending = nil
        rules.releaseAtRest()
        #expect(!rules.holdsState)
    }

    @Test func aRouteAndARunningFilePumpKeepTheState() {
        var rules = HTTPRelayRules()
        rules.route = route
        rules.releaseAtRest()
        #expect(rules.route == route, "the mapped upstream's route outlives an idle moment")
        rules.route = nil
        let entered = rules.filePump.enter()
        #expect(entered)
        rules.releaseAtRest()
        #expect(rules.holdsState && rules.filePump.isRunning, "a pump in progress is not forgotten")
        let enteredAgain = rules.filePump.enter()
        #expect(!enteredAgain, "the running pump is asked for another round, not entered twice")
        let again = rules.filePump.takeAgain()
        #expect(again)
        rules.filePump.leave()
        rules.releaseAtRest()
        #expect(!rules.holdsState)
    }

    @Test func aCopyIsIndependent() {
        var original = HTTPRelayRules()
        original.route = route
        var copy = original
        copy.route = nil
        #expect(original.route == route && copy.route == nil)
    }
}
