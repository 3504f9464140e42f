import MITMCore
import MITMRules
import Testing

/// One rules machine from a request to the end of its response, as both relays drive it: the machine that held and
/// sent the request on takes the response head, its pause at a breakpoint, its body and its end; response events
/// before the request went on are named.
@Suite struct RuledExchangeContinuityTests {
    @Test func aResponseRewriteFollowsTheRequestsDelay() throws {
        var actions = RuleActions()
        actions.delay = 2
        actions.status = 503
        actions.responseHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "Retry-After", value: "5")])
        for streams in [false, true] {
            var machine = RuledExchange(streams: streams)
            #expect(
                try machine.handle(.requestHead(try RuleDecision.ofOneRule(actions), now: 10)) == [
                    .wait(until: 2_000_000_010)
                ])
            #expect(try machine.handle(.deadlinePassed) == [.forward(edits: HeaderEdits())])
            #expect(try machine.handle(.responseHead(status: 100)) == [])
            #expect(
                try machine.handle(.responseHead(status: 200)) == [
                    .setStatus(503), .editResponseHeaders(actions.responseHeaders),
                    .report("status 200 replaced by 503; response headers edited"),
                ])
            #expect(try machine.handle(.responseHeadSent) == [])
            #expect(try machine.handle(.responseBody) == [])
            #expect(try machine.handle(.responseEnded) == [])
            #expect(machine.state == .finished)
            #expect(machine.decision.delay == 2)
            #expect(throws: RuledExchange.ImpossibleEvent(event: .responseBody, state: .finished)) {
                try machine.handle(.responseBody)
            }
        }
    }

    @Test func aResponseBreakpointFollowsTheRequestsBreakpoint() throws {
        var actions = RuleActions()
        actions.breakpoint = Breakpoint(request: true, response: true)
        actions.bodyFile = "/srv/down.json"
        let decided = try RuleDecision.ofOneRule(actions)
        // The relay holds the request at its breakpoint before the machine decides; the web UI continues it.
        var pause = BreakpointMachine(try #require(decided.breakpoint).0, rule: "r")
        #expect(pause.receive(.reached(.request, now: 0)) == .hold(deadline: 300_000_000_000))
        #expect(pause.receive(.continued(BreakpointEdit())) == .release(BreakpointEdit()))
        var machine = RuledExchange(streams: true)
        #expect(try machine.handle(.requestHead(decided, now: 1)) == [.forward(edits: HeaderEdits())])
        // The same breakpoint holds the response; the same machine waits for the web UI's answer.
        #expect(pause.receive(.reached(.response, now: 2)) == .hold(deadline: 300_000_000_002))
        #expect(try machine.handle(.responseHeldAtBreakpoint) == [])
        #expect(machine.state == .responseAtBreakpoint)
        #expect(throws: RuledExchange.ImpossibleEvent(event: .responseHead(status: 200), state: .responseAtBreakpoint))
        {
            try machine.handle(.responseHead(status: 200))
        }
        #expect(throws: RuledExchange.ImpossibleEvent(event: .responseBody, state: .responseAtBreakpoint)) {
            try machine.handle(.responseBody)
        }
        #expect(try machine.handle(.breakpointAnswered(continued: true)) == [])
        // The head as the web UI edited it gets the rules' body.
        #expect(try machine.handle(.responseHead(status: 201)) == [.readReplacement(path: "/srv/down.json")])
        #expect(
            try machine.handle(.replacementRead(.success(Array("down".utf8)), isHEAD: false)) == [
                .replaceBody(contentLength: 4), .report("body replaced by /srv/down.json (4 B)"),
            ])
        #expect(try machine.handle(.responseHeadSent) == [.sendBody(Array("down".utf8))])
        #expect(try machine.handle(.responseBody) == [.dropBody])
        #expect(try machine.handle(.responseEnded) == [])
        #expect(machine.state == .finished)
    }

    @Test func aResponseAbortedAtItsBreakpointEndsTheExchange() throws {
        var actions = RuleActions()
        actions.breakpoint = Breakpoint(request: false, response: true)
        var machine = RuledExchange(streams: false)
        _ = try machine.handle(.requestHead(try RuleDecision.ofOneRule(actions), now: 0))
        _ = try machine.handle(.responseHeldAtBreakpoint)
        #expect(try machine.handle(.breakpointAnswered(continued: false)) == [])
        #expect(machine.state == .finished)
        #expect(throws: RuledExchange.ImpossibleEvent(event: .responseHead(status: 200), state: .finished)) {
            try machine.handle(.responseHead(status: 200))
        }
    }

    @Test func responseEventsBeforeTheRequestWentOnAreNamed() throws {
        let response: [RuledExchange.Event] = [
            .responseHead(status: 200), .responseHeldAtBreakpoint, .breakpointAnswered(continued: true),
            .responseHeadSent, .responseBody, .responseEnded,
        ]
        var waiting = RuledExchange(streams: false)
        var delayedActions = RuleActions()
        delayedActions.delay = 1
        var delayed = RuledExchange(streams: true)
        _ = try delayed.handle(.requestHead(try RuleDecision.ofOneRule(delayedActions), now: 0))
        var answeredActions = RuleActions()
        answeredActions.respond = FixedResponse(status: 204)
        var answering = RuledExchange(streams: false)
        _ = try answering.handle(.requestHead(try RuleDecision.ofOneRule(answeredActions), now: 0))
        for event in response {
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .awaitingRequest)) {
                try waiting.handle(event)
            }
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .delayed(until: 1_000_000_000))) {
                try delayed.handle(event)
            }
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .answering)) {
                try answering.handle(event)
            }
        }
        // Sent on, it awaits the head: no body, end or answer to a pause comes before it.
        var forwarded = RuledExchange(streams: false)
        _ = try forwarded.handle(.requestHead(try RuleDecision.ofOneRule(RuleActions()), now: 0))
        for event: RuledExchange.Event in [
            .responseHeadSent, .responseBody, .responseEnded, .breakpointAnswered(continued: true),
        ] {
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .forwarded)) {
                try forwarded.handle(event)
            }
        }
        #expect(
            RuledExchange.ImpossibleEvent(event: .responseBody, state: .forwarded).description
                == "the rules' exchange machine got responseBody while forwarded")
    }
}
