import Testing

@testable import MITMProxy

/// The pump loop's guard: a nested call asks for another round instead of nesting, and no request is lost.
@Suite struct PumpGateTests {
    /// A pump whose first round triggers a nested call (as a relay's pump hands events to another that calls back).
    final class Pump {
        var gate = PumpGate()
        var rounds = 0
        var depth = 0
        var deepest = 0
        var nestedCallsLeft: Int

        init(nestedCalls: Int) { nestedCallsLeft = nestedCalls }

        func pump() {
            guard gate.enter() else { return }
            defer { gate.leave() }
            repeat {
                depth += 1
                deepest = max(deepest, depth)
                rounds += 1
                if nestedCallsLeft > 0 {
                    nestedCallsLeft -= 1
                    pump()
                }
                depth -= 1
            } while gate.takeAgain()
        }
    }

    @Test func aNestedCallBecomesAnotherRoundNotANestedLoop() {
        let pump = Pump(nestedCalls: 3)
        pump.pump()
        #expect(pump.rounds == 4, "one round, then one per nested call")
        #expect(pump.deepest == 1, "the loop never nested")
        #expect(!pump.gate.isRunning)
    }

    @Test func aRoundThatMovedAsksForAnotherAndTheLoopEndsWhenNothingMoves() {
        var gate = PumpGate()
        var work = 5
        var rounds = 0
        let entered = gate.enter()
        #expect(entered)
        repeat {
            rounds += 1
            if work > 0 {
                work -= 1
                gate.askAgain()
            }
        } while gate.takeAgain()
        gate.leave()
        #expect(rounds == 6 && work == 0)
        let enteredAgain = gate.enter()
        #expect(enteredAgain, "a later call runs the loop again")
    }
}
