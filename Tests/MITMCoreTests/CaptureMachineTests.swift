import MITMCore
import Testing

/// `--capture`'s life as a state machine, driven without sockets or processes: each step in order, the command, and a
/// teardown in reverse of exactly what was set up, however the run ends.
@Suite struct CaptureMachineTests {
    typealias Step = CaptureMachine.Step

    /// The steps before the command, in order.
    private static let setupSteps = Step.allCases.filter { $0 != .command }

    /// A machine that did every step before `step` and now performs `step`.
    private func machine(performing step: Step) throws -> CaptureMachine {
        var machine = CaptureMachine()
        #expect(try machine.handle(.begin) == [.removeLeftovers])
        #expect(try machine.handle(.leftoversRemoved) == [.perform(.namespace)])
        for done in Step.allCases.prefix(while: { $0 != step }) {
            let next = Step(rawValue: done.rawValue + 1)!
            #expect(try machine.handle(.stepDone(done)) == [.perform(next)])
        }
        #expect(machine.state == .settingUp(step, interrupted: false))
        return machine
    }

    private func undoing(through last: Step) -> [CaptureMachine.Action] {
        Step.allCases.filter { $0.rawValue <= last.rawValue }.reversed().map(CaptureMachine.Action.undo)
    }

    @Test func aRunSetsUpInOrderRunsTheCommandAndTakesEverythingDownInReverse() throws {
        var machine = try machine(performing: .command)
        #expect(try machine.handle(.commandStarted(pid: 41)).isEmpty)
        #expect(try machine.handle(.commandEnded).isEmpty)
        #expect(
            try machine.handle(.end) == [
                .undo(.command), .undo(.rules), .undo(.listeners), .undo(.resolver), .undo(.routes),
                .undo(.addresses), .undo(.link), .undo(.namespace),
            ])
        #expect(machine.outcome == .completed)
    }

    @Test(arguments: Step.allCases)
    func aFailedStepTakesDownItselfAndEveryStepBeforeItAndNothingElse(step: Step) throws {
        var machine = try machine(performing: step)
        #expect(try machine.handle(.stepFailed(step, reason: "no")) == undoing(through: step))
        #expect(machine.outcome == .failed(step, reason: "no"))
        #expect(try machine.handle(.end).isEmpty, "taken down once")
    }

    @Test(arguments: setupSteps)
    func aSignalDuringAStepLetsItFinishThenTakesDownWhatExists(step: Step) throws {
        var machine = try machine(performing: step)
        #expect(try machine.handle(.signal).isEmpty, "the step in flight is not cut short")
        #expect(try machine.handle(.stepDone(step)) == undoing(through: step))
        #expect(machine.outcome == .interrupted)
    }

    @Test func aSignalBeforeAnythingWasMadeUndoesNothing() throws {
        var idle = CaptureMachine()
        #expect(try idle.handle(.signal).isEmpty)
        #expect(idle.outcome == .interrupted)
        var cleaning = CaptureMachine()
        _ = try cleaning.handle(.begin)
        #expect(try cleaning.handle(.signal).isEmpty)
        #expect(try cleaning.handle(.leftoversRemoved).isEmpty)
        #expect(cleaning.outcome == .interrupted)
    }

    @Test func aSignalWhileTheCommandRunsIsPassedOnAndOneJustBeforeItStartsReachesItAtOnce() throws {
        var running = try machine(performing: .command)
        _ = try running.handle(.commandStarted(pid: 7))
        #expect(try running.handle(.signal) == [.signalCommand(pid: 7)])
        #expect(try running.handle(.signal) == [.signalCommand(pid: 7)])
        var starting = try machine(performing: .command)
        #expect(try starting.handle(.signal).isEmpty)
        #expect(try starting.handle(.commandStarted(pid: 8)) == [.signalCommand(pid: 8)])
    }

    @Test(arguments: Step.allCases)
    func endingTheRunMidwayTakesDownWhatExistsOnce(step: Step) throws {
        var machine = try machine(performing: step)
        #expect(try machine.handle(.end) == undoing(through: step))
        #expect(machine.outcome == .abandoned)
        #expect(try machine.handle(.end).isEmpty)
        #expect(try machine.handle(.signal).isEmpty)
    }

    @Test func impossibleEventsAreNamedWithTheState() throws {
        var machine = try machine(performing: .routes)
        #expect(
            throws: CaptureMachine.ImpossibleEvent(
                event: .stepDone(.link), state: .settingUp(.routes, interrupted: false))
        ) {
            try machine.handle(.stepDone(.link))
        }
        #expect(throws: CaptureMachine.ImpossibleEvent.self) { try machine.handle(.begin) }
        #expect(throws: CaptureMachine.ImpossibleEvent.self) { try machine.handle(.commandStarted(pid: 1)) }
        #expect(throws: CaptureMachine.ImpossibleEvent.self) { try machine.handle(.leftoversRemoved) }
        var command = try self.machine(performing: .command)
        #expect(throws: CaptureMachine.ImpossibleEvent.self) { try command.handle(.stepDone(.command)) }
        _ = try command.handle(.end)
        #expect(throws: CaptureMachine.ImpossibleEvent.self) { try command.handle(.stepDone(.namespace)) }
        let error = CaptureMachine.ImpossibleEvent(event: .commandEnded, state: .idle)
        #expect(error.description.contains("commandEnded") && error.description.contains("idle"))
    }
}
