import Foundation
import MITMCore
import MITMHTTP2
import MITMWebUI

/// A response of the HTTP/2 relay held at a breakpoint: its fields, not yet sent to the client, and the body and end
/// that arrived after them. The body's bytes are not consumed while held, so the upstream's stream window (256 KiB)
/// closes behind them: that is the backpressure.
struct HTTP2HeldResponse {
    var machine: BreakpointMachine
    var pauseID: Int?
    let fields: [HTTP2HeaderField]
    var body: [UInt8] = []
    var ended = false
    var trailers: [HTTP2HeaderField]?
}

extension HTTP2Relay {
    /// Holds a final response head whose stream's decision has a response breakpoint; whether it is held.
    func pauseAtResponseBreakpoint(_ clientID: Int32, _ block: HTTP2HeaderBlock) -> Bool {
        guard let (breakpoint, rule) = ruled.exchanges[clientID]?.decision.breakpoint, breakpoint.response,
            let stream = streams[clientID],
            !stream.asksForWebSocket
        else { return false }
        var machine = BreakpointMachine(breakpoint, rule: rule)
        guard case .hold(let deadline) = machine.receive(.reached(.response, now: context.clock.now())) else {
            return false
        }
        // The stream's rules machine holds the response too (nil: it could not, and reset the stream).
        guard ruledResponse(.responseHeldAtBreakpoint, on: clientID) != nil else { return true }
        let response = HTTP2Heads.response(block.fields)
        let hasBody = response.mayHaveBody(toRequestMethod: stream.record.request.method)
        let body: PausedBody =
            !hasBody
            ? .none("this response has no body (status \(response.status) or a HEAD request)")
            : .of(block.endStream ? [] : nil)
        let exchange = BreakpointPause.Exchange(
            phase: .response, rule: rule, connection: connectionID, method: stream.record.request.method,
            url: stream.record.url, status: response.status,
            headers: response.headers.map { [$0.name, $0.value] }, body: body, hostFixed: true)
        nonisolated(unsafe) let relay = self
        let id = context.breakpoints.hold(exchange, deadline: deadline, clock: context.clock, loop: loop) {
            answer, id in
            guard relay.ruled.heldResponses[clientID]?.pauseID == id else { return }
            relay.performResponseBreakpoint(answer.event, on: clientID)
        }
        ruled.heldResponses[clientID] = HTTP2HeldResponse(
            machine: machine, pauseID: id, fields: block.fields, ended: block.endStream)
        return true
    }

    /// Body bytes of a held response, kept (not consumed) until the web UI answers; true when `clientID` is held.
    func holdResponseBody(_ bytes: [UInt8], on clientID: Int32) -> Bool {
        guard ruled.heldResponses[clientID] != nil else { return false }
        ruled.heldResponses[clientID]?.body += bytes
        return true
    }

    /// The end (with trailers, if any) of a held response; true when `clientID` is held.
    func holdResponseEnd(on clientID: Int32, trailers: [HTTP2HeaderField]? = nil) -> Bool {
        guard let held = ruled.heldResponses[clientID] else { return false }
        ruled.heldResponses[clientID]?.ended = true
        ruled.heldResponses[clientID]?.trailers = trailers
        if let id = held.pauseID, held.fields.value(of: ":status").map({ $0 != "204" && $0 != "304" }) ?? true,
            streams[clientID]?.record.request.method != "HEAD"
        {
            context.breakpoints.update(id, body: .of(held.body))
        }
        return true
    }

    /// Feeds `event` to the held response's machine and performs its action.
    func performResponseBreakpoint(_ event: BreakpointMachine.Event, on clientID: Int32) {
        guard var held = ruled.heldResponses[clientID], !life.isClosed else { return }
        let action = held.machine.receive(event)
        ruled.heldResponses[clientID] = held
        switch action {
        case .proceed, .impossible, .hold:
            return
        case .release(let edit):
            unlistResponsePause(clientID)
            ruled.heldResponses[clientID] = nil
            if ruledResponse(.breakpointAnswered(continued: true), on: clientID) != nil {
                releaseResponse(held, edit, on: clientID)
            }
            pump()
        case .answer(let status, let reason):
            unlistResponsePause(clientID)
            ruled.heldResponses[clientID] = nil
            guard ruledResponse(.breakpointAnswered(continued: false), on: clientID) != nil else {
                pump()
                return
            }
            if let record = streams[clientID]?.record, let decision = ruled.exchanges[clientID]?.decision {
                reportRuled(decision, record, "answered \(status): \(reason)")
            }
            if let upstreamID = streams[clientID]?.upstreamID { resetUpstream(upstreamID, .cancel) }
            answerLocally(clientID, .error(status: status, reason: reason))
            pump()
        case .forget:
            unlistResponsePause(clientID)
            ruled.heldResponses[clientID] = nil
        }
    }

    /// Sends the held response on as the web UI edited it, then the body and end that arrived meanwhile.
    private func releaseResponse(_ held: HTTP2HeldResponse, _ edit: BreakpointEdit, on clientID: Int32) {
        let fields = Self.edited(held.fields, BreakpointEdit(status: edit.status, headers: edit.headers))
        var what = ["response continued at breakpoint"]
        if let status = edit.status, held.fields.value(of: ":status") != String(status) {
            what.append("status replaced by \(status)")
        }
        if edit.headers != nil { what.append("response headers edited") }
        let replacement = edit.body.map { Array($0.utf8) }
        if let replacement {
            what.append("body replaced (\(ByteCountText.format(replacement.count)))")
            if let upstreamID = streams[clientID]?.upstreamID {
                upstreamSession?.consume(streamID: upstreamID, count: held.body.count)
            }
            ruled.responseBodyEdited.insert(clientID)
        }
        if let record = streams[clientID]?.record, let decision = ruled.exchanges[clientID]?.decision {
            reportRuled(decision, record, what.joined(separator: "; "))
        }
        let endsWithHead = held.ended && held.body.isEmpty && held.trailers == nil
        guard
            relayResponse(
                fields, on: clientID, endStream: replacement == nil ? endsWithHead : held.ended,
                replacement: replacement),
            replacement == nil
        else { return }
        if !held.body.isEmpty, dropsResponseBody(clientID) {
            // The rules' `bodyFile` replaced it: the held bytes leave the upstream's window here.
            if let upstreamID = streams[clientID]?.upstreamID {
                upstreamSession?.consume(streamID: upstreamID, count: held.body.count)
            }
        } else if !held.body.isEmpty {
            streams[clientID]?.record.responseBodyBytes += held.body.count
            streams[clientID]?.record.responseBody.append(held.body)
            clientSession.send(held.body, on: clientID)
        }
        guard held.ended, !endsWithHead, ruledResponse(.responseEnded, on: clientID) != nil,
            let stream = streams[clientID], advance(stream, .responseEnded) == .sendToClient
        else { return }
        if let trailers = held.trailers {
            streams[clientID]?.record.responseTrailers = HTTP2Heads.response(trailers).headers
            clientSession.finish(streamID: clientID, trailers: trailers)
        } else {
            clientSession.finish(streamID: clientID)
        }
    }

    private func unlistResponsePause(_ clientID: Int32) {
        if let id = ruled.heldResponses[clientID]?.pauseID.take() { context.breakpoints.unlist(id) }
    }

    /// The stream ends: a held response of it is unlisted.
    func endResponseBreakpoint(_ clientID: Int32) {
        guard ruled.heldResponses[clientID] != nil else { return }
        performResponseBreakpoint(.exchangeEnded, on: clientID)
        unlistResponsePause(clientID)
        ruled.heldResponses[clientID] = nil
    }
}
