import Foundation
import MITMCore
import MITMIO
import MITMWebUI
import Synchronization
import Testing

@testable import MITMProxy

/// The desk of paused exchanges without a relay: what it lists, how it stamps times from the injected clock, and
/// which answers it refuses before they reach a relay.
@Suite struct BreakpointDeskTests {
    private let loop = EventLoop(index: 0, label: "desk-test")
    private let time = ManualClock()

    private func exchange(_ phase: BreakpointPhase, body: PausedBody = .of([])) -> BreakpointPause.Exchange {
        BreakpointPause.Exchange(
            phase: phase, rule: "r", connection: 3, method: "GET", url: "https://a.test/x",
            status: phase == .response ? 200 : nil, headers: [["Accept", "*/*"]], body: body, hostFixed: true)
    }

    @Test func aHoldIsStampedWithTheClocksWallTimeAndItsDeadline() throws {
        let desk = BreakpointDesk()
        let deadline = time.clock.after(seconds: 90)
        let id = desk.hold(exchange(.request), deadline: deadline, clock: time.clock, loop: loop) { _, _ in }
        let paused = try #require(desk.paused.first)
        #expect(paused.id == id)
        #expect(paused.abortsAt - paused.since == 90_000)
        let json = String(decoding: try JSONEncoder().encode(paused), as: UTF8.self)
        #expect(
            json.contains(#""phase":"request""#) && json.contains(#""id":\#(id)"#) && json.contains(#""body":{"#),
            "one flat object: \(json)")
        desk.unlist(id)
        #expect(desk.paused.isEmpty)
    }

    @Test func answersThatDoNotFitThePauseAreRefused() {
        let desk = BreakpointDesk()
        let request = desk.hold(exchange(.request, body: .of(nil)), deadline: 0, clock: time.clock, loop: loop) {
            _, _ in
        }
        let response = desk.hold(
            exchange(.response, body: .of(Array(repeating: 0x61, count: PausedBody.editLimit + 1))), deadline: 0,
            clock: time.clock, loop: loop
        ) { _, _ in }
        #expect(
            desk.answer(request, .continued(BreakpointEdit(status: 200)))
                == .invalid("a paused request has no status to change"))
        #expect(
            invalid(desk.answer(request, .continued(BreakpointEdit(body: "x"))))?.contains("still streaming") == true)
        #expect(
            desk.answer(response, .continued(BreakpointEdit(method: "POST")))
                == .invalid("the method of a paused response cannot change"))
        #expect(
            invalid(desk.answer(response, .continued(BreakpointEdit(status: 101))))?.contains("between 200 and 599")
                == true)
        #expect(
            invalid(desk.answer(response, .continued(BreakpointEdit(body: "x"))))?.contains("larger than the 1.0 MB")
                == true)
        guard case .notPaused(let gone)? = desk.answer(99, .aborted) else {
            Issue.record("an answer to a pause that is not listed is refused as not paused")
            return
        }
        #expect(gone.hasPrefix("no exchange is paused as number 99"))
    }

    private func invalid(_ refusal: PauseRefusal?) -> String? {
        guard case .invalid(let problem)? = refusal else { return nil }
        return problem
    }

    @Test func anUpdatedBodyIsListedAndTheAnswerReachesTheRelaysLoop() async throws {
        let desk = BreakpointDesk()
        let heard = Mutex<[Int]>([])
        desk.onChange { list in heard.withLock { $0.append(list.count) } }
        let answered = AsyncStream<Int>.makeStream()
        let id = desk.hold(exchange(.response, body: .of(nil)), deadline: 0, clock: time.clock, loop: loop) {
            answer, id in
            if case .continued(let edit) = answer, edit.body == "new" { answered.continuation.yield(id) }
        }
        desk.update(id, body: .of(Array("old".utf8)))
        #expect(desk.paused.first?.exchange.body.text == "old")
        #expect(desk.answer(id, .continued(BreakpointEdit(body: "new"))) == nil)
        var iterator = answered.stream.makeAsyncIterator()
        #expect(await iterator.next() == id)
        #expect(heard.withLock { $0 } == [1, 1])
    }

    @Test func bodiesAreEditableOnlyWhenWholeSmallAndText() {
        #expect(PausedBody.of(Array("{\"a\":1}".utf8)).text == "{\"a\":1}")
        #expect(PausedBody.of([0xFF, 0xFE]).notEditable == "the body is binary (not UTF-8 text)")
        #expect(PausedBody.of(nil).size == nil)
    }
}
