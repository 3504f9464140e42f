import MITMCore
import MITMRules
import Testing

@Suite struct RuledExchangeTests {
    private func started(_ actions: RuleActions, streams: Bool = false) throws -> (
        RuledExchange, [RuledExchange.Action]
    ) {
        var machine = RuledExchange(streams: streams)
        let first = try machine.handle(.requestHead(try RuleDecision.ofOneRule(actions), now: 1_000))
        return (machine, first)
    }

    @Test func aRequestNoRuleAnswersGoesOnWithItsHeaderEdits() throws {
        var actions = RuleActions()
        actions.requestHeaders = HeaderEdits(
            setFields: [HTTPHeaderField(name: "X-QA", value: "1")], removeNames: ["Cookie"])
        let (machine, first) = try started(actions)
        #expect(first == [.forward(edits: actions.requestHeaders)])
        #expect(machine.state == .forwarded)
        #expect(!machine.holdsRequest)
    }

    @Test func aDelayHoldsTheRequestUntilItsDeadlineThenSendsItOn() throws {
        var actions = RuleActions()
        actions.delay = 1.5
        var (machine, first) = try started(actions)
        #expect(first == [.wait(until: 1_000 + 1_500_000_000)])
        #expect(machine.holdsRequest)
        #expect(try machine.handle(.deadlinePassed) == [.forward(edits: HeaderEdits())])
        #expect(machine.state == .forwarded)
    }

    @Test func aDelayBeyondTheClockNeverEnds() throws {
        var actions = RuleActions()
        actions.delay = 86_400
        var machine = RuledExchange(streams: false)
        let first = try machine.handle(.requestHead(try RuleDecision.ofOneRule(actions), now: .max - 10))
        #expect(first == [.wait(until: .max)])
    }

    @Test func aFixedAnswerIsSentWithItsBody() throws {
        var actions = RuleActions()
        actions.respond = FixedResponse(status: 418)
        var (machine, first) = try started(actions)
        #expect(first == [.answerLocally(.fixed(FixedResponse(status: 418), rule: "r"))])
        #expect(try machine.handle(.localAnswerMade(hasHead: true, fileLength: 0)) == [.sendHead(withBody: true)])
        #expect(machine.state == .finished)
    }

    @Test func aFileAnswerIsStreamedInPiecesAsTheClientTakesThem() throws {
        var actions = RuleActions()
        actions.mapLocal = "/srv/mock"
        var (machine, first) = try started(actions)
        #expect(first == [.answerLocally(.mapLocal(root: "/srv/mock", remainder: "items", rule: "r"))])
        let length = RuledExchange.filePiece * 2 + 10
        #expect(try machine.handle(.localAnswerMade(hasHead: true, fileLength: length)) == [.sendHead(withBody: false)])
        #expect(try machine.handle(.clientHasRoom) == [.sendFilePiece(offset: 0, count: RuledExchange.filePiece)])
        #expect(
            try machine.handle(.clientHasRoom) == [
                .sendFilePiece(offset: RuledExchange.filePiece, count: RuledExchange.filePiece)
            ])
        #expect(
            try machine.handle(.clientHasRoom) == [
                .sendFilePiece(offset: RuledExchange.filePiece * 2, count: 10), .endFileAnswer,
            ])
        #expect(machine.state == .finished)
        #expect(throws: RuledExchange.ImpossibleEvent.self) { try machine.handle(.clientHasRoom) }
    }

    @Test func aFileThatCannotBeReadAbandonsTheAnswer() throws {
        var actions = RuleActions()
        actions.mapLocal = "/srv/mock"
        var (machine, _) = try started(actions)
        _ = try machine.handle(.localAnswerMade(hasHead: true, fileLength: 100))
        #expect(try machine.handle(.fileFailed) == [.abandonFileAnswer])
        #expect(machine.state == .finished)
    }

    @Test func aMissingFileLeavesTheAnswerToTheProxysError() throws {
        var actions = RuleActions()
        actions.mapLocal = "/srv/missing"
        var (machine, _) = try started(actions)
        #expect(try machine.handle(.localAnswerRefused) == [])
        #expect(machine.state == .finished)
    }

    @Test func faultsBeforeTheHeadBreakTheConnectionWithoutAnswer() throws {
        for fault in [RuleFault.closeBeforeHeaders, .resetBeforeHeaders] {
            var actions = RuleActions()
            actions.fault = fault
            var (machine, first) = try started(actions)
            #expect(first == [.answerLocally(.fault(fault, rule: "r"))])
            #expect(
                try machine.handle(.localAnswerMade(hasHead: false, fileLength: 0)) == [
                    .breakConnection(fault, afterHead: false)
                ])
        }
    }

    @Test func aFaultAfterTheHeadOfALocalAnswerBreaksAfterTheHead() throws {
        var actions = RuleActions()
        actions.respond = FixedResponse(status: 200, body: "x")
        actions.fault = .resetAfterHeaders
        var (machine, _) = try started(actions)
        #expect(
            try machine.handle(.localAnswerMade(hasHead: true, fileLength: 0))
                == [.sendHead(withBody: false), .breakConnection(.resetAfterHeaders, afterHead: true)])
    }

    @Test func theResponseHeadGetsTheRulesStatusHeadersAndBody() throws {
        var actions = RuleActions()
        actions.status = 503
        actions.responseHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "Retry-After", value: "5")])
        actions.bodyFile = "/srv/down.json"
        var (machine, _) = try started(actions)
        #expect(try machine.handle(.responseHead(status: 100)) == [])
        #expect(
            try machine.handle(.responseHead(status: 200))
                == [
                    .setStatus(503), .editResponseHeaders(actions.responseHeaders),
                    .readReplacement(path: "/srv/down.json"),
                ])
        #expect(
            try machine.handle(.replacementRead(.success(Array("down".utf8)), isHEAD: false))
                == [
                    .replaceBody(contentLength: 4),
                    .report(
                        "status 200 replaced by 503; response headers edited; body replaced by /srv/down.json (4 B)"),
                ])
        #expect(try machine.handle(.responseHeadSent) == [.sendBody(Array("down".utf8))])
        #expect(machine.dropsUpstreamBody)
    }

    @Test func aHEADResponseKeepsTheReplacementsLengthButNoBody() throws {
        var actions = RuleActions()
        actions.bodyFile = "/srv/a.json"
        var (machine, _) = try started(actions)
        _ = try machine.handle(.responseHead(status: 200))
        #expect(
            try machine.handle(.replacementRead(.success([1, 2, 3]), isHEAD: true)).first
                == .replaceBody(contentLength: 3))
        #expect(try machine.handle(.responseHeadSent) == [])
        #expect(machine.dropsUpstreamBody)
    }

    @Test func anUnreadableBodyFileLeavesTheUpstreamBodyAndSaysWhy() throws {
        var actions = RuleActions()
        actions.bodyFile = "/srv/gone.json"
        var (machine, _) = try started(actions)
        _ = try machine.handle(.responseHead(status: 200))
        #expect(
            try machine.handle(.replacementRead(.failure(.init("no file /srv/gone.json")), isHEAD: false))
                == [.report("body not replaced: no file /srv/gone.json")])
        #expect(try machine.handle(.responseHeadSent) == [])
        #expect(machine.state == .relayingBody(dropsUpstreamBody: false))
    }

    @Test func aFaultAfterTheUpstreamsHeadIsNamedPerProtocol() throws {
        var actions = RuleActions()
        actions.fault = .resetAfterHeaders
        for (streams, words) in [
            (false, "reset the connection after the response head"), (true, "reset the stream after the response head"),
        ] {
            var (machine, _) = try started(actions, streams: streams)
            #expect(try machine.handle(.responseHead(status: 200)) == [.report(words)])
            #expect(try machine.handle(.responseHeadSent) == [.breakConnection(.resetAfterHeaders, afterHead: true)])
            #expect(machine.state == .finished)
        }
        actions.fault = .closeAfterHeaders
        var (machine, _) = try started(actions, streams: true)
        #expect(
            try machine.handle(.responseHead(status: 200)) == [.report("closed the connection after the response head")]
        )
    }

    @Test func aResponseNoRuleRewritesPassesAsItIs() throws {
        var (machine, _) = try started(RuleActions())
        #expect(try machine.handle(.responseHead(status: 204)) == [])
        #expect(try machine.handle(.responseHeadSent) == [])
        #expect(machine.state == .relayingBody(dropsUpstreamBody: false))
    }

    @Test func eventsTheStateCannotHaveAreNamed() throws {
        var machine = RuledExchange(streams: false)
        #expect(throws: RuledExchange.ImpossibleEvent(event: .deadlinePassed, state: .awaitingRequest)) {
            try machine.handle(.deadlinePassed)
        }
        #expect(throws: RuledExchange.ImpossibleEvent.self) { try machine.handle(.responseHead(status: 200)) }
        var actions = RuleActions()
        actions.delay = 1
        var (delayed, _) = try started(actions)
        #expect(throws: RuledExchange.ImpossibleEvent.self) { try delayed.handle(.responseHead(status: 200)) }
        #expect(throws: RuledExchange.ImpossibleEvent.self) { try delayed.handle(.requestHead(RuleDecision(), now: 0)) }
        let impossible = RuledExchange.ImpossibleEvent(event: .clientHasRoom, state: .forwarded)
        #expect(impossible.description == "the rules' exchange machine got clientHasRoom while forwarded")
    }
}
