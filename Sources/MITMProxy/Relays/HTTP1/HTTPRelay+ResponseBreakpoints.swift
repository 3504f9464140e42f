import Foundation
import MITMCore
import MITMIO
import MITMWebUI

/// A response of the HTTP/1 relay held at a breakpoint: its head, not yet sent to the client, and what the upstream
/// sent after it, parsed and kept in order. The upstream is read on until the body is whole or `PausedBody.editLimit`
/// bytes wait (so that a body that follows its head closely can be edited); then its reads pause until the web UI
/// answers, and the upstream's own flow control holds the rest.
struct HTTPRelayHeldResponse {
    var machine: BreakpointMachine
    var pauseID: Int?
    let head: HTTPResponseHead
    let framing: HTTP1BodyFraming
    /// The upstream's events after the head (the body, its end, a pipelined response after it).
    var events: [HTTP1Event] = []
    var body: [UInt8] = []
    var bodyComplete = false
    /// The body arrived whole after the pause was listed (the listing is told).
    var bodyCompletedLate = false
    var upstreamEnded = false
}

extension HTTPRelay {
    /// Holds a final response head of the first exchange when its decision has a response breakpoint; whether it is held.
    func pauseAtResponseBreakpoint(_ head: HTTPResponseHead, framing: HTTP1BodyFraming) -> Bool {
        guard rules.heldResponse == nil, head.status >= 200, head.status != 101, let first = exchanges.first,
            first.local == nil,
            let (breakpoint, rule) = first.ruled?.machine.decision.breakpoint, breakpoint.response
        else { return false }
        var breakpointMachine = BreakpointMachine(breakpoint, rule: rule)
        guard case .hold = breakpointMachine.receive(.reached(.response, now: context.clock.now())) else {
            return false
        }
        // The exchange's rules machine holds the response too: nil here closed the relay (an event it cannot have).
        guard firstExchangeRuledActions(.responseHeldAtBreakpoint) != nil else { return true }
        let hasBody = head.mayHaveBody(toRequestMethod: first.record.request.method)
        rules.heldResponse = HTTPRelayHeldResponse(
            machine: breakpointMachine, head: head, framing: framing, bodyComplete: !hasBody)
        return true
    }

    /// An upstream event after the held head: kept for the release.
    func holdResponseEvent(_ event: HTTP1Event) {
        guard var held = rules.heldResponse else { return }
        switch event {
        case .body(let bytes) where !held.bodyComplete: held.body += bytes
        case .end where !held.bodyComplete:
            held.bodyComplete = true
            held.bodyCompletedLate = held.pauseID != nil
        default: break
        }
        held.events.append(event)
        rules.heldResponse = held
    }

    /// Upstream bytes while a response is held: parsed and kept.
    func holdResponseBytes(_ bytes: UnsafeRawBufferPointer) {
        var events: [HTTP1Event] = []
        let direct = min(Self.directBodyBytes(of: &responseParser), bytes.count)
        if direct > 0 {
            events.append(.body(Array(bytes[..<direct])))
            events += responseParser.skipBody(direct)
        }
        do {
            if direct < bytes.count {
                events += try responseParser.feed(UnsafeRawBufferPointer(rebasing: bytes[direct...]))
            }
        } catch {
            endResponseBreakpoint()
            upstreamBroke("sent a malformed response: \(error.reason)")
            return
        }
        handleResponseEvents(events)
    }

    /// The upstream's input ended while a response is held.
    func holdResponseEnd() {
        do {
            handleResponseEvents(try responseParser.finish())
        } catch {
            endResponseBreakpoint()
            upstreamBroke("closed the connection in the middle of a response")
            return
        }
        rules.heldResponse?.upstreamEnded = true
        heldResponseRead()
    }

    /// After a read while a response is held: lists it (once), tells the listing a body that came whole, and stops
    /// reading the upstream once its body is whole or large.
    func heldResponseRead() {
        guard let held = rules.heldResponse, held.machine.isPaused, !machine.isClosed else { return }
        if held.pauseID == nil {
            listResponsePause()
        } else if held.bodyCompletedLate, let id = held.pauseID {
            rules.heldResponse?.bodyCompletedLate = false
            context.breakpoints.update(id, body: .of(held.body))
        }
        if held.bodyComplete || held.body.count >= PausedBody.editLimit || held.upstreamEnded {
            perform(machine.receive(.responseHeld))
        }
    }

    private func listResponsePause() {
        guard let held = rules.heldResponse, let first = exchanges.first else { return }
        let hasBody = held.head.mayHaveBody(toRequestMethod: first.record.request.method)
        let body: PausedBody =
            hasBody
            ? .of(held.bodyComplete ? held.body : nil)
            : .none(
                "this response has no body (status \(held.head.status) "
                    + "or a HEAD request)")
        let exchange = BreakpointPause.Exchange(
            phase: .response, rule: held.machine.rule, connection: connectionID,
            method: first.record.request.method, url: first.record.url, status: held.head.status,
            headers: held.head.headers.map { [$0.name, $0.value] }, body: body, hostFixed: true)
        guard case .paused(_, let deadline) = held.machine.state else { return }
        nonisolated(unsafe) let relay = self
        rules.heldResponse?.pauseID = context.breakpoints.hold(
            exchange, deadline: deadline, clock: context.clock, loop: loop
        ) { answer, id in
            guard !relay.machine.isClosed, relay.rules.heldResponse?.pauseID == id else { return }
            relay.performResponseBreakpoint(answer.event)
        }
    }

    /// Feeds `event` to the held response's machine and performs its action.
    func performResponseBreakpoint(_ event: BreakpointMachine.Event) {
        guard var held = rules.heldResponse else { return }
        let action = held.machine.receive(event)
        rules.heldResponse = held
        switch action {
        case .proceed, .impossible, .hold:
            return
        case .release(let edit):
            guard firstExchangeRuledActions(.breakpointAnswered(continued: true)) != nil else { return }
            releaseResponse(held, edit)
        case .answer(let status, let reason):
            unlistResponsePause()
            rules.heldResponse = nil
            guard firstExchangeRuledActions(.breakpointAnswered(continued: false)) != nil else { return }
            abortHeldResponse(status: status, reason: reason, rule: held.machine.rule)
        case .forget:
            unlistResponsePause()
            rules.heldResponse = nil
        }
    }

    /// Sends the held response on as the web UI edited it, then what the upstream sent after its head.
    private func releaseResponse(_ held: HTTPRelayHeldResponse, _ edit: BreakpointEdit) {
        unlistResponsePause()
        rules.heldResponse = nil
        var head = held.head
        var what = ["response continued at breakpoint"]
        if let status = edit.status, status != head.status {
            head.status = status
            head.reason = LocalResponse.phrase(status)
            what.append("status \(held.head.status) replaced by \(status)")
        }
        if let fields = edit.headerFields {
            head.headers = HTTPHeaders.keepingFraming(of: held.head.headers, in: fields)
            what.append("response headers edited")
        }
        let replacement = edit.body.map { Array($0.utf8) }
        if let replacement { what.append("body replaced (\(ByteCountText.format(replacement.count)))") }
        if let first = exchanges.first {
            context.events.emit(
                .ruleFired(
                    RuleFiring(on: first.record, rules: [held.machine.rule], action: what.joined(separator: "; "))))
        }
        relayResponseHead(head, framing: held.framing, upstreamStatus: held.head.status, replacementBody: replacement)
        if !machine.isClosed { handleResponseEvents(held.events) }
        if held.upstreamEnded {
            if rules.heldResponse != nil {
                rules.heldResponse?.upstreamEnded = true
            } else if !machine.isClosed {
                upstreamEnded()
            }
        }
        if rules.heldResponse == nil, !machine.isClosed { perform(machine.receive(.responseReleased)) }
    }

    /// The held response is aborted (from the web UI, or its deadline): the client gets the proxy's `status`, the
    /// upstream connection ends, and so does the client's after the answer.
    private func abortHeldResponse(status: Int, reason: String, rule: String) {
        guard var record = exchanges.first?.record else { return }
        let local = LocalResponse.error(status: status, reason: reason)
        let head = local.head(keepAlive: false)
        context.events.emit(.ruleFired(RuleFiring(on: record, rules: [rule], action: "answered \(status): \(reason)")))
        record.response = head
        record.responseBody.append(local.body)
        record.responseBodyBytes = local.body.count
        record.finished = context.clock.wallNow()
        record.failure = reason
        context.events.emit(.exchange(record))
        exchanges.removeAll()
        client.write(head.serialized() + local.body)
        upstream?.onEvent = nil
        upstream?.close()
        upstream = nil
        closeAfterFlush()
    }

    private func unlistResponsePause() {
        if let id = rules.heldResponse?.pauseID.take() { context.breakpoints.unlist(id) }
    }

    /// The held response's exchange ended another way (the relay closes, the upstream failed): its pause is unlisted.
    func endResponseBreakpoint() {
        guard rules.heldResponse != nil else { return }
        performResponseBreakpoint(.exchangeEnded)
        unlistResponsePause()
        rules.heldResponse = nil
    }
}
