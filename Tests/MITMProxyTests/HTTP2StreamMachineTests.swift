import Foundation
import Testing

@testable import MITMProxy

private typealias Machine = HTTP2StreamMachine

private let headArrived = Date(timeIntervalSince1970: 1_000)
private let requestEnded = Date(timeIntervalSince1970: 1_001)
private let responseHead = Date(timeIntervalSince1970: 1_002)

/// A machine whose request head arrived, after `steps` (each expected to be taken).
private func machineAfter(_ steps: [Machine.Event], requestEndedAt: Date? = nil) -> Machine {
    var machine = Machine(requestEndedAt: requestEndedAt)
    for event in steps {
        let action = machine.receive(event)
        if case .impossible(let what) = action { Issue.record("setting up with \(event): \(what.rawValue)") }
    }
    return machine
}

private let relayed: [Machine.Event] = [.upstreamOpened(7)]
private let streaming: [Machine.Event] = relayed + [.responseHead(at: responseHead, ends: false)]
private let answeredWithFile: [Machine.Event] = [.answeredLocally(at: responseHead, ends: false)]

/// The HTTP/2 relay's stream machine (`HTTP2StreamMachine`): every transition, and every impossible event named.
@Suite struct HTTP2StreamMachineTests {
    @Test func aStreamStartsDecidingWithItsRequestOpenOrEndedByItsHead() {
        let open = Machine()
        #expect(open.request == .flowing && open.route == .deciding && open.response == .awaited)
        #expect(open.upstreamID == nil && open.requestEndedAt == nil && open.headAt == nil)
        let ended = Machine(requestEndedAt: headArrived)
        #expect(ended.request == .ended(at: headArrived) && ended.requestEndedAt == headArrived)
    }

    @Test func requestBodyGoesWhereTheRouteSays() {
        var deciding = machineAfter([])
        #expect(deciding.receive(.requestBody) == .discard)
        var held = machineAfter([.held])
        #expect(held.route == .held)
        #expect(held.receive(.requestBody) == .hold)
        var upstream = machineAfter(relayed)
        #expect(upstream.route == .upstream(7) && upstream.upstreamID == 7)
        #expect(upstream.receive(.requestBody) == .sendUpstream(7))
        var detached = machineAfter(relayed + [.upstreamDetached])
        #expect(detached.route == .detached && detached.upstreamID == nil)
        #expect(detached.receive(.requestBody) == .discard)
        var answered = machineAfter([.answeredLocally(at: responseHead, ends: true)])
        #expect(answered.route == .nowhere)
        #expect(answered.receive(.requestBody) == .discard)
    }

    @Test func theRequestEndsOnceAndItsEndGoesWhereItsBodyWent() {
        var upstream = machineAfter(relayed)
        #expect(upstream.receive(.requestEnded(at: requestEnded)) == .sendUpstream(7))
        #expect(upstream.request == .ended(at: requestEnded))
        var held = machineAfter([.held])
        #expect(held.receive(.requestEnded(at: requestEnded)) == .hold)
        var nowhere = machineAfter([.answeredLocally(at: responseHead, ends: true)])
        #expect(nowhere.receive(.requestEnded(at: requestEnded)) == .discard)
    }

    @Test func aHeldRequestGoesUpstreamWhenReleasedOrIsAnsweredThere() {
        var released = machineAfter([.held])
        #expect(released.receive(.upstreamOpened(9)) == .none)
        #expect(released.route == .upstream(9))
        var answered = machineAfter([.held])
        #expect(answered.receive(.answeredLocally(at: responseHead, ends: true)) == .sendToClient)
        #expect(answered.route == .nowhere)
        #expect(answered.response == .ended(from: .proxy, headAt: responseHead))
    }

    @Test func theUpstreamsResponseHeadStartsOrEndsTheResponse() {
        var streamingHead = machineAfter(relayed)
        #expect(streamingHead.receive(.responseHead(at: responseHead, ends: false)) == .sendToClient)
        #expect(streamingHead.response == .streaming(from: .upstream, headAt: responseHead))
        #expect(streamingHead.responseStarted && !streamingHead.responseEnded && streamingHead.headAt == responseHead)
        var endingHead = machineAfter(relayed)
        #expect(endingHead.receive(.responseHead(at: responseHead, ends: true)) == .sendToClient)
        #expect(endingHead.response == .ended(from: .upstream, headAt: responseHead) && endingHead.responseEnded)
    }

    @Test func aStreamingResponseRelaysItsBodyThenEnds() {
        var machine = machineAfter(streaming)
        #expect(machine.receive(.responseBody) == .sendToClient)
        #expect(machine.receive(.responseEnded) == .sendToClient)
        #expect(machine.response == .ended(from: .upstream, headAt: responseHead))
    }

    @Test func aLocalAnswerWithAFileStreamsUntilTheFileEnds() {
        var machine = machineAfter(answeredWithFile)
        #expect(machine.response == .streaming(from: .proxy, headAt: responseHead))
        #expect(machine.receive(.responseEnded) == .sendToClient)
        #expect(machine.response == .ended(from: .proxy, headAt: responseHead))
    }

    @Test func aLocalAnswerAfterTheUpstreamFailedKeepsTheRoute() {
        var machine = machineAfter(relayed + [.upstreamDetached])
        #expect(machine.receive(.answeredLocally(at: responseHead, ends: true)) == .sendToClient)
        #expect(machine.route == .detached)
    }

    @Test func aResetStreamDropsWhatWouldGoToTheClientAndKeepsItsHeadsInstant() {
        var beforeHead = machineAfter(relayed + [.clientReset])
        #expect(beforeHead.response == .reset(headAt: nil) && !beforeHead.responseStarted)
        #expect(beforeHead.receive(.responseHead(at: responseHead, ends: false)) == .discard)
        #expect(beforeHead.receive(.answeredLocally(at: responseHead, ends: true)) == .discard)
        #expect(beforeHead.receive(.responseBody) == .discard)
        #expect(beforeHead.receive(.responseEnded) == .discard)
        #expect(beforeHead.response == .reset(headAt: nil))
        let afterHead = machineAfter(streaming + [.clientReset])
        #expect(afterHead.response == .reset(headAt: responseHead) && afterHead.headAt == responseHead)
        #expect(afterHead.responseStarted && !afterHead.responseEnded)
    }

    @Test func resettingAnEndedResponseKeepsItsHead() {
        let machine = machineAfter(streaming + [.responseEnded, .clientReset])
        #expect(machine.response == .reset(headAt: responseHead))
    }

    // MARK: impossible events

    @Test(
        arguments: [
            ([Machine.Event](), Machine.Event.requestBody, Machine.ImpossibleEvent.requestBodyAfterItsEnd, true),
            ([], .requestEnded(at: requestEnded), .requestEndedTwice, true),
            (relayed, .held, .heldWhileRouted, false),
            ([.held], .held, .heldWhileRouted, false),
            (relayed, .upstreamOpened(9), .openedWhileRouted, false),
            (relayed + [.upstreamDetached], .upstreamOpened(9), .openedWhileRouted, false),
            ([.answeredLocally(at: responseHead, ends: true)], .upstreamOpened(9), .openedWhileRouted, false),
            ([], .upstreamDetached, .detachedWithoutUpstream, false),
            ([.held], .upstreamDetached, .detachedWithoutUpstream, false),
            (streaming, .answeredLocally(at: responseHead, ends: true), .answeredAfterResponseBegan, false),
            (streaming, .responseHead(at: responseHead, ends: false), .secondResponseHead, false),
            (answeredWithFile, .responseHead(at: responseHead, ends: false), .secondResponseHead, false),
            (relayed, .responseBody, .responseBodyWithoutHead, false),
            (streaming + [.responseEnded], .responseBody, .responseBodyAfterItsEnd, false),
            (answeredWithFile, .responseBody, .responseBodyForLocalAnswer, false),
            (relayed, .responseEnded, .responseEndedWithoutHead, false),
            (streaming + [.responseEnded], .responseEnded, .responseEndedTwice, false),
        ] as [([Machine.Event], Machine.Event, Machine.ImpossibleEvent, Bool)])
    func anEventTheStatesCannotTakeIsNamedAndChangesNothing(
        steps: [HTTP2StreamMachine.Event], event: HTTP2StreamMachine.Event, named: HTTP2StreamMachine.ImpossibleEvent,
        requestEndedByHead: Bool
    ) {
        var machine = machineAfter(steps, requestEndedAt: requestEndedByHead ? headArrived : nil)
        let before = machine
        #expect(machine.receive(event) == .impossible(named))
        #expect(machine == before)
        #expect(!named.rawValue.isEmpty)
    }
}
