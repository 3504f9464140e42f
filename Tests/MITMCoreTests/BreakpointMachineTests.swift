import MITMCore
import Testing

/// One exchange at a breakpoint, without sockets: pauses where the breakpoint says, released or aborted by the web UI,
/// aborted when its deadline passes, forgotten when the exchange ends, and every impossible event named.
@Suite struct BreakpointMachineTests {
    private let second: UInt64 = 1_000_000_000

    @Test func aRequestPausesUntilContinuedWithItsEdit() {
        var machine = BreakpointMachine(Breakpoint(request: true, response: false, timeout: 60), rule: "hold")
        #expect(machine.receive(.reached(.request, now: 5 * second)) == .hold(deadline: 65 * second))
        #expect(machine.isPaused)
        let edit = BreakpointEdit(method: "POST", headers: [["X-Edited", "yes"]])
        #expect(machine.receive(.continued(edit)) == .release(edit))
        #expect(machine.state == .running)
        #expect(
            machine.receive(.reached(.response, now: 6 * second)) == .proceed,
            "no response breakpoint: the response goes on")
        #expect(machine.state == .done)
    }

    @Test func abortAnswers502NamingTheRule() {
        var machine = BreakpointMachine(Breakpoint(request: true, response: false), rule: "checkout")
        _ = machine.receive(.reached(.request, now: 0))
        guard case .answer(let status, let reason) = machine.receive(.aborted) else {
            Issue.record("an abort answers the client")
            return
        }
        #expect(status == 502)
        #expect(reason.contains("aborted at breakpoint \"checkout\" from the web UI"))
        #expect(machine.state == .done)
    }

    @Test func theDeadlineAbortsWith504AndSaysHowLongItWaited() {
        var machine = BreakpointMachine(Breakpoint(request: true, response: false, timeout: 90), rule: "slow")
        _ = machine.receive(.reached(.request, now: 10 * second))
        #expect(
            machine.receive(.timerFired(now: 99 * second)) == .hold(deadline: 100 * second),
            "a timer that fires early re-arms")
        guard case .answer(let status, let reason) = machine.receive(.timerFired(now: 100 * second)) else {
            Issue.record("the deadline aborts")
            return
        }
        #expect(status == 504)
        #expect(reason.contains("held at breakpoint \"slow\" for 90s without an answer from the web UI"), "\(reason)")
        #expect(
            machine.receive(.continued(BreakpointEdit()))
                == .impossible("the exchange is not paused (it was continued, aborted or timed out already)"))
    }

    @Test func aResponseBreakpointLetsTheRequestGoAndPausesTheResponse() {
        var machine = BreakpointMachine(Breakpoint(request: false, response: true, timeout: 1), rule: "r")
        #expect(machine.receive(.reached(.request, now: 0)) == .proceed)
        #expect(machine.receive(.reached(.response, now: 0)) == .hold(deadline: second))
        #expect(machine.receive(.continued(BreakpointEdit(status: 201))) == .release(BreakpointEdit(status: 201)))
        #expect(machine.state == .done)
    }

    @Test func bothPhasesPauseOneAfterTheOtherEachWithItsOwnDeadline() {
        var machine = BreakpointMachine(Breakpoint(request: true, response: true, timeout: 10), rule: "both")
        #expect(machine.receive(.reached(.request, now: 0)) == .hold(deadline: 10 * second))
        #expect(!machine.deadlinePassed(at: 9 * second))
        #expect(machine.deadlinePassed(at: 10 * second))
        #expect(machine.receive(.continued(BreakpointEdit(body: "edited"))) == .release(BreakpointEdit(body: "edited")))
        #expect(!machine.deadlinePassed(at: 100 * second), "a running exchange has no deadline")
        #expect(machine.receive(.reached(.response, now: 20 * second)) == .hold(deadline: 30 * second))
        guard case .answer(504, let reason) = machine.receive(.timerFired(now: 30 * second)) else {
            Issue.record("the response's deadline aborts it")
            return
        }
        #expect(reason.hasPrefix("the response was held at breakpoint \"both\""), "\(reason)")
    }

    @Test func aClientThatLeavesWhilePausedIsForgotten() {
        var machine = BreakpointMachine(Breakpoint(request: true, response: false), rule: "r")
        _ = machine.receive(.reached(.request, now: 0))
        #expect(machine.receive(.exchangeEnded) == .forget)
        #expect(
            machine.receive(.aborted)
                == .impossible("the exchange is not paused (it was continued, aborted or timed out already)"))
    }

    @Test func impossibleEventsAreNamedAndChangeNothing() {
        var machine = BreakpointMachine(Breakpoint(request: true, response: true), rule: "r")
        #expect(
            machine.receive(.continued(BreakpointEdit()))
                == .impossible("the exchange is not paused (it was continued, aborted or timed out already)"))
        #expect(
            machine.receive(.timerFired(now: 0))
                == .impossible("a pause timer fired for an exchange that is not paused"))
        _ = machine.receive(.reached(.request, now: 0))
        #expect(
            machine.receive(.reached(.request, now: 0)) == .impossible("the exchange reached its request while paused"))
        #expect(machine.isPaused)
    }

    @Test func editsWithBrokenHeadersOrMethodsAreRefused() {
        #expect(BreakpointEdit(method: "GE T").problem == "method \"GE T\" is not an HTTP method")
        #expect(
            BreakpointEdit(headers: [["X-A", "one\r\nX-Injected: two"]]).problem
                == "the value of header X-A contains a line break or control character")
        #expect(BreakpointEdit(headers: [["Bad Name", "v"]]).problem?.contains("is not a [name, value] pair") == true)
        #expect(BreakpointEdit(method: "PATCH", headers: [["X-A", "b"]]).problem == nil)
    }
}
