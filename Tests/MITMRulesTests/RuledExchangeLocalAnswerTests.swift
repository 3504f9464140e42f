import MITMCore
import MITMRules
import Testing

/// The rules' local answers through their exchange machine, as both relays drive it: the answer asked for, made (or
/// refused), its head and body, its file streamed, its faults and their words, and the events no answer can take.
@Suite struct RuledExchangeLocalAnswerTests {
    private func answering(_ actions: RuleActions, streams: Bool = false) throws -> RuledExchange {
        let rule = TrafficRule(name: "r", pattern: try URLPattern(parsing: "api.test/v1"), actions: actions)
        let decision = RuleBook([rule]).decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/v1/items"))
        var machine = RuledExchange(streams: streams)
        _ = try machine.handle(.requestHead(decision, now: 0))
        #expect(machine.state == .answering)
        return machine
    }

    private func fixed(fault: RuleFault? = nil) -> RuleActions {
        var actions = RuleActions()
        actions.respond = FixedResponse(status: 200, body: "ok")
        actions.fault = fault
        return actions
    }

    @Test func aLocalAnswerWaitsForTheDelayAndIsNotSentOn() throws {
        var actions = fixed()
        actions.delay = 2
        actions.requestHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "X-QA", value: "1")])
        var machine = RuledExchange(streams: false)
        let rule = TrafficRule(name: "r", pattern: try URLPattern(parsing: "api.test/v1"), actions: actions)
        let decision = RuleBook([rule]).decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/v1/items"))
        // Every rule that covers the request applies: the delay first, then the answer (never the upstream).
        #expect(try machine.handle(.requestHead(decision, now: 5)) == [.wait(until: 2_000_000_005)])
        #expect(machine.holdsRequest)
        #expect(
            try machine.handle(.deadlinePassed)
                == [.answerLocally(.fixed(FixedResponse(status: 200, body: "ok"), rule: "r"))])
        #expect(!machine.holdsRequest)
        #expect(!machine.sendsFile)
    }

    @Test func aLocalAnswerWithoutADelayIsMadeAtOnce() throws {
        var machine = RuledExchange(streams: false)
        let rule = TrafficRule(name: "r", pattern: try URLPattern(parsing: "api.test/v1"), actions: fixed())
        let decision = RuleBook([rule]).decide(
            RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/v1/items"))
        #expect(
            try machine.handle(.requestHead(decision, now: 5))
                == [.answerLocally(.fixed(FixedResponse(status: 200, body: "ok"), rule: "r"))])
        #expect(!machine.holdsRequest)
    }

    @Test func aFileAnswerSendsItsFileUntilTheLastPiece() throws {
        var actions = RuleActions()
        actions.mapLocal = "/srv/mock"
        var machine = try answering(actions)
        _ = try machine.handle(.localAnswerMade(hasHead: true, fileLength: 10))
        #expect(machine.sendsFile)
        #expect(try machine.handle(.clientHasRoom) == [.sendFilePiece(offset: 0, count: 10), .endFileAnswer])
        #expect(!machine.sendsFile)
    }

    @Test func anEmptyFileOrAHEADRequestIsAnsweredByTheHeadAlone() throws {
        var actions = RuleActions()
        actions.mapLocal = "/srv/mock"
        var machine = try answering(actions)
        #expect(try machine.handle(.localAnswerMade(hasHead: true, fileLength: 0)) == [.sendHead(withBody: true)])
        #expect(!machine.sendsFile)
        #expect(machine.state == .finished)
    }

    @Test func aFaultAfterTheHeadOfAFileAnswerSendsNoFile() throws {
        var actions = RuleActions()
        actions.mapLocal = "/srv/mock"
        actions.fault = .closeAfterHeaders
        var machine = try answering(actions)
        #expect(
            try machine.handle(.localAnswerMade(hasHead: true, fileLength: 100))
                == [.sendHead(withBody: false), .breakConnection(.closeAfterHeaders, afterHead: true)])
        #expect(!machine.sendsFile)
    }

    @Test func aFaultsFailureIsNamedPerProtocolBeforeAndAfterTheHead() throws {
        let connection = try answering(fixed(), streams: false)
        let stream = try answering(fixed(), streams: true)
        #expect(connection.failure(.resetBeforeHeaders, afterHead: false) == "the connection was reset by rule")
        #expect(stream.failure(.resetBeforeHeaders, afterHead: false) == "the stream was reset by rule")
        #expect(
            connection.failure(.resetAfterHeaders, afterHead: true)
                == "the connection was reset after the response head by rule")
        #expect(
            stream.failure(.resetAfterHeaders, afterHead: true)
                == "the stream was reset after the response head by rule")
        for machine in [connection, stream] {
            #expect(machine.failure(.closeBeforeHeaders, afterHead: false) == "the connection was closed by rule")
            #expect(
                machine.failure(.closeAfterHeaders, afterHead: true)
                    == "the connection was closed after the response head by rule")
        }
    }

    @Test func aLocalAnswerWithoutAHeadThatNoFaultAsksForClosesTheConnection() throws {
        var machine = try answering(fixed())
        #expect(
            try machine.handle(.localAnswerMade(hasHead: false, fileLength: 0))
                == [.breakConnection(.closeBeforeHeaders, afterHead: false)])
        #expect(machine.state == .finished)
    }

    @Test func eventsAnAnswerCannotHaveAreNamed() throws {
        var answering = try answering(fixed())
        for event: RuledExchange.Event in [
            .deadlinePassed, .responseHead(status: 200), .responseHeadSent, .clientHasRoom, .fileFailed,
            .replacementRead(.success([]), isHEAD: false), .requestHead(RuleDecision(), now: 0),
        ] {
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .answering)) {
                try answering.handle(event)
            }
        }
        var actions = RuleActions()
        actions.mapLocal = "/srv/mock"
        var sending = try self.answering(actions)
        _ = try sending.handle(.localAnswerMade(hasHead: true, fileLength: 10))
        for event: RuledExchange.Event in [
            .localAnswerMade(hasHead: true, fileLength: 10), .localAnswerRefused, .responseHeadSent, .deadlinePassed,
        ] {
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .sendingFile(offset: 0, remaining: 10)))
            {
                try sending.handle(event)
            }
        }
        var refused = try self.answering(actions)
        _ = try refused.handle(.localAnswerRefused)
        #expect(throws: RuledExchange.ImpossibleEvent(event: .localAnswerRefused, state: .finished)) {
            try refused.handle(.localAnswerRefused)
        }
        #expect(throws: RuledExchange.ImpossibleEvent(event: .fileFailed, state: .finished)) {
            try refused.handle(.fileFailed)
        }
    }

    @Test func aRequestThatWentOnCannotBeAnsweredLocally() throws {
        var forwarded = RuledExchange(streams: true)
        #expect(try forwarded.handle(.requestHead(RuleDecision(), now: 0)) == [.forward(edits: HeaderEdits())])
        for event: RuledExchange.Event in [
            .localAnswerMade(hasHead: true, fileLength: 0), .localAnswerRefused, .deadlinePassed, .clientHasRoom,
        ] {
            #expect(throws: RuledExchange.ImpossibleEvent(event: event, state: .forwarded)) {
                try forwarded.handle(event)
            }
        }
        var actions = RuleActions()
        actions.delay = 1
        let rule = TrafficRule(name: "r", pattern: try URLPattern(parsing: "api.test/v1"), actions: actions)
        var delayed = RuledExchange(streams: true)
        _ = try delayed.handle(
            .requestHead(
                RuleBook([rule]).decide(
                    RequestFacts(scheme: "https", host: "api.test", port: 443, method: "GET", target: "/v1")),
                now: 0))
        #expect(
            throws: RuledExchange.ImpossibleEvent(event: .localAnswerRefused, state: .delayed(until: 1_000_000_000))
        ) {
            try delayed.handle(.localAnswerRefused)
        }
        #expect(delayed.holdsRequest)
    }
}
