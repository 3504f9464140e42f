import Testing

@testable import MITMCore

/// The HTTP/1 relay's decisions, driven event by event with no sockets.
@Suite struct HTTP1RelayMachineTests {
    typealias Machine = HTTP1RelayMachine

    /// Takes a request without a body through the machine.
    private func bodilessRequest(_ machine: inout Machine) {
        #expect(machine.receive(.requestHead(.none)) == .none)
        #expect(machine.receive(.requestEnd) == .none)
    }

    @Test func keepAliveExchangesFollowEachOther() {
        var machine = Machine()
        for _ in 0..<2 {
            bodilessRequest(&machine)
            #expect(
                machine.receive(.responseHead(status: 200, framing: .contentLength(5), awaited: .response))
                    == .relayHead)
            #expect(machine.responseHeadSent)
            #expect(machine.receive(.responseBody) == .forward)
            #expect(
                machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                    == .endResponse(then: .nextExchange))
            #expect(!machine.responseHeadSent && !machine.requestIsOpen && machine.isRelaying)
        }
    }

    @Test func persistenceIsPerHop() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(
            machine.receive(.responseHead(status: 200, framing: .contentLength(2), awaited: .response)) == .relayHead)
        // The client said close, the upstream did not: the client's connection ends, the upstream's may be parked.
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: false))
                == .endResponse(then: .closeClientKeepingUpstream))
        #expect(machine.upstreamInputIsOpen)

        bodilessRequest(&machine)
        #expect(
            machine.receive(.responseHead(status: 200, framing: .contentLength(2), awaited: .response)) == .relayHead)
        // The upstream said close: both go, whatever the client said.
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: false, clientKeepsAlive: true))
                == .endResponse(then: .closeBoth))
    }

    @Test func aClientThatEndedBetweenRequestsIsDone() {
        var machine = Machine()
        #expect(machine.receive(.requestHead(.contentLength(3))) == .none)
        #expect(machine.receive(.clientInputEnded) == .none)
        // Its last request's body is still queued: it is not done yet.
        #expect(machine.clientHasEnded && !machine.clientIsDone)
        #expect(machine.receive(.requestBody) == .forward)
        #expect(machine.receive(.requestEnd) == .none)
        #expect(machine.clientIsDone)
    }

    @Test func chunkedBodiesAreReencodedWithTheirTrailers() {
        var machine = Machine()
        #expect(machine.receive(.requestHead(.chunked)) == .none)
        #expect(machine.receive(.requestBody) == .forwardAsChunk)
        #expect(machine.receive(.requestEnd) == .writeLastChunk)
        #expect(machine.receive(.responseHead(status: 200, framing: .chunked, awaited: .response)) == .relayHead)
        #expect(machine.receive(.responseBody) == .forwardAsChunk)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endChunkedResponse(then: .nextExchange))
    }

    @Test func aCloseDelimitedResponseEndsBothConnections() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(machine.receive(.responseHead(status: 200, framing: .closeDelimited, awaited: .response)) == .relayHead)
        #expect(machine.receive(.responseBody) == .forward)
        #expect(machine.receive(.upstreamInputEnded) == .none)
        #expect(!machine.upstreamInputIsOpen)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .closeBoth))
        #expect(machine.receive(.upstreamAttached) == .none)
        #expect(machine.upstreamInputIsOpen)
    }

    @Test func pipelinedRequestsGoOnBeforeTheirResponses() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(machine.receive(.requestHead(.contentLength(4))) == .none)
        #expect(machine.receive(.requestBody) == .forward)
        #expect(machine.receive(.requestEnd) == .none)
        bodilessRequest(&machine)
        for _ in 0..<3 {
            #expect(
                machine.receive(.responseHead(status: 200, framing: .contentLength(1), awaited: .response))
                    == .relayHead)
            #expect(
                machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                    == .endResponse(then: .nextExchange))
        }
    }

    @Test(arguments: [200, 204, 304])
    func aResponseWithoutABodyKeepsTheConnections(status: Int) {
        // The parser frames a response to HEAD, a 204 and a 304 as having no body, whatever its fields say.
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(machine.receive(.responseHead(status: status, framing: .none, awaited: .response)) == .relayHead)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .nextExchange))
    }

    @Test func informationalResponsesComeAndGoBeforeTheFinalOne() {
        var machine = Machine()
        #expect(machine.receive(.requestHead(.contentLength(10))) == .none)
        #expect(machine.receive(.responseHead(status: 100, framing: .none, awaited: .response)) == .relayInterimHead)
        #expect(machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true)) == .none)
        #expect(!machine.responseHeadSent)
        #expect(machine.receive(.requestBody) == .forward)
        #expect(machine.receive(.requestEnd) == .none)
        #expect(machine.receive(.responseHead(status: 201, framing: .none, awaited: .response)) == .relayHead)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .nextExchange))
    }

    @Test func switchingProtocolsUpgradesAtItsEnd() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(machine.receive(.responseHead(status: 101, framing: .none, awaited: .responseOrUpgrade)) == .relayHead)
        #expect(machine.responseHeadSent)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .upgrade))
        #expect(machine.receive(.upgraded) == .none)
        #expect(machine.isClosed && !machine.isRelaying)
        #expect(machine.receive(.close) == .none)
    }

    @Test func responsesNobodyAskedForAreRefused() {
        var machine = Machine()
        #expect(
            machine.receive(.responseHead(status: 200, framing: .none, awaited: .nothing)) == .refuseResponse(.unasked))
        #expect(
            machine.receive(.responseHead(status: 101, framing: .none, awaited: .response))
                == .refuseResponse(.unaskedUpgrade))
        #expect(!machine.responseHeadSent)
    }

    @Test func aRefusedUpgradeGoesOnAsHTTP() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(
            machine.receive(.responseHead(status: 426, framing: .contentLength(3), awaited: .responseOrUpgrade))
                == .relayHead)
        #expect(machine.receive(.responseBody) == .forward)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .nextExchange))
    }

    @Test func aBodyTheRulesReplacedIsDroppedAndNeverEndsTheConnection() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(machine.receive(.responseHead(status: 200, framing: .chunked, awaited: .response)) == .relayHead)
        #expect(machine.receive(.responseBodyReplaced) == .none)
        #expect(machine.receive(.responseBody) == .discard)
        // The client got the replacement with its length: no last chunk, no close.
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .nextExchange))
    }

    @Test func aRewrittenStatusFramesTheClientsBody() {
        var machine = Machine()
        bodilessRequest(&machine)
        #expect(machine.receive(.responseHead(status: 204, framing: .none, awaited: .response)) == .relayHead)
        // 204 made 200 with no length: the client reads until close.
        let rewritten = HTTPResponseHead(status: 200, reason: "OK")
        #expect(machine.receive(.responseStatusRewritten(rewritten, requestMethod: "GET")) == .none)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .closeBoth))

        bodilessRequest(&machine)
        #expect(machine.receive(.responseHead(status: 200, framing: .closeDelimited, awaited: .response)) == .relayHead)
        // A close-delimited 200 made 304: the client reads no body and needs no close.
        let notModified = HTTPResponseHead(status: 304, reason: "Not Modified")
        #expect(machine.receive(.responseStatusRewritten(notModified, requestMethod: "GET")) == .none)
        #expect(
            machine.receive(.responseEnd(upstreamKeepsAlive: true, clientKeepsAlive: true))
                == .endResponse(then: .nextExchange))
    }

    @Test func impossibleEventsAreNamed() {
        var machine = Machine()
        #expect(machine.receive(.requestBody) == .impossible(.requestBodyOutsideARequest))
        #expect(machine.receive(.requestEnd) == .impossible(.requestEndOutsideARequest))
        #expect(machine.receive(.responseBody) == .impossible(.responseBodyWithoutAHead))
        #expect(machine.receive(.responseBodyReplaced) == .impossible(.bodyReplacedWithoutAHead))
        #expect(machine.receive(.requestHead(.chunked)) == .none)
        #expect(machine.receive(.requestHead(.none)) == .impossible(.requestHeadInsideARequest))
        #expect(
            machine.receive(.responseHead(status: 200, framing: .contentLength(1), awaited: .response)) == .relayHead)
        #expect(
            machine.receive(.responseHead(status: 200, framing: .none, awaited: .response))
                == .impossible(.responseHeadInsideAResponse))
        #expect(machine.receive(.closeAfterFlush) == .linger)
        #expect(machine.receive(.upgraded) == .impossible(.upgradeWhileNotRelaying))
    }

    @Test func theClientLingersOnceThenCloses() {
        var machine = Machine()
        #expect(machine.receive(.closeAfterFlush) == .linger)
        #expect(machine.isLingering && !machine.isRelaying && !machine.isClosed)
        #expect(machine.receive(.closeAfterFlush) == .none)
        #expect(machine.receive(.close) == .closeNow)
        #expect(machine.isClosed)
        #expect(machine.receive(.close) == .none)
        #expect(machine.receive(.closeAfterFlush) == .none)
    }

    @Test func readsPauseOncePerReasonAndResumeWhenNoReasonIsLeft() {
        var machine = Machine()
        #expect(machine.receive(.requestWaits) == .pauseClient)
        #expect(machine.receive(.requestWaits) == .none)
        #expect(machine.receive(.upstreamFull) == .pauseClient)
        // The upstream drained, but a request still waits in the queue.
        #expect(machine.receive(.upstreamDrained) == .none)
        #expect(machine.receive(.requestsFlow) == .resumeClient)
        #expect(machine.receive(.requestsFlow) == .none)
        #expect(machine.receive(.upstreamDrained) == .none)

        #expect(machine.receive(.clientFull) == .pauseUpstream)
        #expect(machine.receive(.clientFull) == .none)
        #expect(machine.pauses == [.upstreamForClient])
        #expect(machine.receive(.clientDrained) == .resumeUpstream)
        #expect(machine.receive(.clientDrained) == .none)
        #expect(machine.pauses.isEmpty)
    }

    @Test func aResponseHeldAtABreakpointKeepsTheUpstreamPausedUntilReleased() {
        var machine = Machine()
        #expect(machine.receive(.responseHeld) == .pauseUpstream)
        #expect(machine.receive(.responseHeld) == .none)
        #expect(machine.receive(.clientFull) == .pauseUpstream, "each reason pauses (pausing twice is harmless)")
        #expect(machine.receive(.clientDrained) == .none, "the breakpoint still holds the upstream")
        #expect(machine.receive(.clientFull) == .pauseUpstream)
        #expect(machine.receive(.responseReleased) == .none, "the client is still full")
        #expect(machine.receive(.clientDrained) == .resumeUpstream)
        #expect(machine.receive(.responseReleased) == .none)
        #expect(machine.pauses.isEmpty)
    }

    @Test func aClosedRelayResumesNothing() {
        var machine = Machine()
        #expect(machine.receive(.requestWaits) == .pauseClient)
        #expect(machine.receive(.close) == .closeNow)
        #expect(machine.receive(.requestsFlow) == .none)
    }
}
