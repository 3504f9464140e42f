import MITMCore
import MITMRules
import MITMWebUI
import Testing

@testable import MITMProxy

/// Breakpoints in a plain-HTTP relay without a socket or a real wait: the pause is listed on the desk, answered as
/// the web UI answers it, and timed out by moving the playbook's clock.
@Suite struct BreakpointLifeTests {
    private func playbook(_ phases: String, timeout: Double = 60) throws -> ConnectionPlaybook {
        let play = try ConnectionPlaybook(origins: ["origin.test:80"])
        var actions = RuleActions()
        actions.breakpoint = try Breakpoint(phases: phases, timeout: timeout)
        play.context.rules.setWebRules([
            TrafficRule(name: "hold", pattern: try URLPattern(parsing: "origin.test/"), actions: actions)
        ])
        return play
    }

    private func paused(_ play: ConnectionPlaybook) -> [BreakpointPause] {
        play.run { play.context.breakpoints.paused }
    }

    private func answer(_ play: ConnectionPlaybook, _ answer: BreakpointPause.Answer) -> PauseRefusal? {
        guard let id = paused(play).first?.id else { return .notPaused("nothing paused") }
        let problem = play.context.breakpoints.answer(id, answer)
        play.run {}  // the answer hops to the loop
        return problem
    }

    @Test func aPausedRequestTimesOutOnTheProxysClockWithA504() throws {
        let play = try playbook("request", timeout: 30)
        play.clientSends("GET http://origin.test/a HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let listed = try #require(paused(play).first)
        #expect(listed.exchange.phase == .request && listed.exchange.url == "http://origin.test/a")
        #expect(listed.since == 1_767_225_600_000, "stamped with the clock's wall time (its start)")
        #expect(listed.abortsAt == listed.since + 30_000)
        play.advance(seconds: 29)
        #expect(paused(play).count == 1 && play.origin(0) == nil, "still held, nothing went upstream")
        play.advance(seconds: 2)
        let reply = play.clientReceived()
        #expect(reply.hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"), "\(reply)")
        #expect(reply.contains("held at breakpoint \"hold\" for 30s without an answer from the web UI"), "\(reply)")
        #expect(paused(play).isEmpty)
        #expect(!play.isClosed, "the idle deadline did not end the paused connection; the client may go on")
    }

    @Test func anEditedRequestBodyGoesUpstreamWithItsNewLength() throws {
        let play = try playbook("request")
        play.clientSends(
            "POST http://origin.test/form HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(paused(play).first?.exchange.body.notEditable?.contains("still streaming") == true)
        play.clientSends("5\r\nhello\r\n0\r\n\r\n")
        let listed = try #require(paused(play).first)
        #expect(listed.exchange.body.text == "hello", "the client is read on while paused until the body is whole")
        #expect(answer(play, .continued(BreakpointEdit(body: "edited body"))) == nil)
        let origin = try #require(play.origin(0))
        let sent = play.run { origin.takeText() }
        #expect(sent.hasSuffix("\r\nContent-Length: 11\r\n\r\nedited body"), "\(sent)")
        #expect(!sent.lowercased().contains("transfer-encoding"), "\(sent)")
    }

    @Test func aRequestBodyStillStreamingCannotBeEdited() throws {
        let play = try playbook("request")
        play.clientSends("POST http://origin.test/up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 10\r\n\r\nabc")
        let listed = try #require(paused(play).first)
        #expect(listed.exchange.body.text == nil)
        #expect(listed.exchange.body.notEditable?.contains("still streaming") == true)
        let refused = answer(play, .continued(BreakpointEdit(body: "x")))
        #expect(
            refused?.message.hasPrefix("the body cannot be edited: the body is still streaming") == true,
            "\(String(describing: refused))")
        #expect(answer(play, .continued(BreakpointEdit())) == nil)
        play.clientSends("defghij")
        let origin = try #require(play.origin(0))
        #expect(play.run { origin.takeText() }.hasSuffix("Content-Length: 10\r\n\r\nabcdefghij"))
    }

    @Test func aPausedResponseIsHeldThenSentEditedWithItsBodyFramedAgain() throws {
        let play = try playbook("response")
        play.clientSends("GET http://origin.test/r HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        _ = play.run { origin.takeText() }
        play.run { origin.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Origin: yes\r\n\r\n4\r\nbody\r\n") }
        #expect(play.clientReceived().isEmpty, "nothing reaches the client while the response is held")
        let listed = try #require(paused(play).first)
        #expect(listed.exchange.phase == .response && listed.exchange.status == 200)
        #expect(listed.exchange.body.notEditable?.contains("still streaming") == true)
        play.run { origin.send("0\r\n\r\n") }
        #expect(paused(play).first?.exchange.body.text == "body", "the listing shows the body once it is whole")
        let edit = BreakpointEdit(status: 201, headers: [["X-Edited", "1"]], body: "new body!")
        #expect(answer(play, .continued(edit)) == nil)
        let reply = play.clientReceived()
        #expect(reply.hasPrefix("HTTP/1.1 201 Created\r\n") || reply.hasPrefix("HTTP/1.1 201 "), "\(reply)")
        #expect(
            reply.contains("X-Edited: 1\r\n") && !reply.contains("X-Origin") && !reply.contains("Transfer-Encoding"),
            "\(reply)")
        #expect(reply.hasSuffix("Content-Length: 9\r\n\r\nnew body!"), "\(reply)")
        #expect(paused(play).isEmpty)
        play.clientSends("GET http://origin.test/r2 HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        #expect(
            play.run { origin.takeText() }.hasPrefix("GET /r2 HTTP/1.1"),
            "the connection goes on after the edited response")
    }

    @Test func aPausedResponseContinuedUneditedKeepsTheUpstreamsBodyAndFraming() throws {
        let play = try playbook("both")
        play.clientSends("GET http://origin.test/r HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        #expect(answer(play, .continued(BreakpointEdit())) == nil, "the request pause")
        let origin = try #require(play.origin(0))
        _ = play.run { origin.takeText() }
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nstream") }
        #expect(paused(play).first?.exchange.phase == .response)
        #expect(answer(play, .continued(BreakpointEdit())) == nil)
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nstream")
    }

    @Test func anAbortedResponseIsA502AndATimedOutOneA504() throws {
        let play = try playbook("response", timeout: 10)
        play.clientSends("GET http://origin.test/r HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        #expect(answer(play, .aborted) == nil)
        let aborted = play.clientReceived()
        #expect(
            aborted.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n")
                && aborted.contains("the response was aborted at breakpoint \"hold\""), "\(aborted)")

        let late = try playbook("response", timeout: 10)
        late.clientSends("GET http://origin.test/r HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let lateOrigin = try #require(late.origin(0))
        late.run { lateOrigin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        late.advance(seconds: 11)
        let timedOut = late.clientReceived()
        #expect(
            timedOut.hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n")
                && timedOut.contains("the response was held at breakpoint"), "\(timedOut)")
        #expect(paused(late).isEmpty)
    }
}
