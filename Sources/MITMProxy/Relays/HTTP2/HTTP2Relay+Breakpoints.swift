import Foundation
import MITMCore
import MITMHTTP2
import MITMIO
import MITMRules
import MITMWebUI

/// A stream of the HTTP/2 relay held at a breakpoint: held as a rule `delay` holds it (`HTTP2RelayRules.Held`, the
/// client's window closed for its body), released by the web UI instead of a timer.
struct HTTP2RelayBreakpoint {
    var machine: BreakpointMachine
    var pauseID: Int?
}

extension HTTP2Relay {
    /// Holds a new stream whose decision has a request breakpoint; whether it is held.
    func pauseAtRequestBreakpoint(
        _ clientID: Int32, _ head: HTTPRequestHead, _ block: HTTP2HeaderBlock, _ decision: RuleDecision
    ) -> Bool {
        guard let (breakpoint, rule) = decision.breakpoint, breakpoint.request else { return false }
        var machine = BreakpointMachine(breakpoint, rule: rule)
        guard case .hold(let deadline) = machine.receive(.reached(.request, now: context.clock.now())) else {
            return false
        }
        ruled.held[clientID] = HTTP2RelayRules.Held(fields: block.fields, decision: decision, ended: block.endStream)
        let url = streams[clientID]?.record.url ?? head.target
        let exchange = BreakpointPause.Exchange(
            phase: .request, rule: rule, connection: connectionID, method: head.method, url: url,
            status: nil, headers: head.headers.map { [$0.name, $0.value] },
            body: .of(block.endStream ? [] : nil), hostFixed: true)
        nonisolated(unsafe) let relay = self
        let id = context.breakpoints.hold(exchange, deadline: deadline, clock: context.clock, loop: loop) {
            answer, id in
            guard relay.ruled.breakpoints[clientID]?.pauseID == id else { return }
            relay.performBreakpoint(answer.event, on: clientID)
        }
        ruled.breakpoints[clientID] = HTTP2RelayBreakpoint(machine: machine, pauseID: id)
        return true
    }

    /// Whether a stream waits for the web UI.
    var hasPausedStream: Bool {
        ruled.breakpoints.values.contains { $0.machine.isPaused }
            || ruled.heldResponses.values.contains { $0.machine.isPaused }
    }

    /// The connection's sweep: pauses whose deadline passed at `now` are aborted.
    func sweepBreakpoints(now: UInt64) {
        for (clientID, breakpoint) in ruled.breakpoints where breakpoint.machine.deadlinePassed(at: now) {
            performBreakpoint(.timerFired(now: now), on: clientID)
        }
        for (clientID, held) in ruled.heldResponses where held.machine.deadlinePassed(at: now) {
            performResponseBreakpoint(.timerFired(now: now), on: clientID)
        }
    }

    /// The held request's body ended: a paused request's listing shows it.
    func heldRequestBodyEnded(_ clientID: Int32) {
        guard let id = ruled.breakpoints[clientID]?.pauseID, let held = ruled.held[clientID] else { return }
        context.breakpoints.update(id, body: .of(held.body.flatMap { $0 }))
    }

    /// Feeds `event` to the stream's machine and performs its action.
    func performBreakpoint(_ event: BreakpointMachine.Event, on clientID: Int32) {
        guard var breakpoint = ruled.breakpoints[clientID], !life.isClosed else { return }
        let action = breakpoint.machine.receive(event)
        ruled.breakpoints[clientID] = breakpoint
        switch action {
        case .proceed, .impossible, .hold:
            return
        case .release(let edit):
            unlistPause(clientID)
            guard var held = ruled.held[clientID] else { return }
            held.fields = Self.edited(held.fields, edit)
            if let text = edit.body, held.ended { replaceHeldBody(&held, with: Array(text.utf8), on: clientID) }
            if let record = streams[clientID]?.record {
                streams[clientID]?.record.request = Self.edited(record.request, held.fields)
            }
            guard let head = streams[clientID]?.record.request else {
                ruled.held[clientID] = nil
                return
            }
            ruled.held[clientID] = held
            _ = startRuledRequest(clientID, held, head: head)
        case .answer(let status, let reason):
            unlistPause(clientID)
            ruled.held[clientID] = nil
            answerLocally(clientID, .error(status: status, reason: reason))
            pump()
        case .forget:
            unlistPause(clientID)
        }
    }

    /// The web UI's body goes upstream instead of the client's: the client's bytes are taken off its window now (the
    /// edited ones leaving upstream do not reopen it), and `content-length` says the new size.
    private func replaceHeldBody(_ held: inout HTTP2RelayRules.Held, with bytes: [UInt8], on clientID: Int32) {
        clientSession.consume(streamID: clientID, count: held.body.reduce(0) { $0 + $1.count })
        held.body = bytes.isEmpty ? [] : [bytes]
        held.fields =
            held.fields.filter { $0.nameText != "content-length" } + [
                HTTP2HeaderField("content-length", String(bytes.count))
            ]
        ruled.requestBodyEdited.insert(clientID)
        if let limit = streams[clientID]?.record.requestBody.limit {
            var captured = CapturedBody(limit: limit)
            captured.append(bytes)
            streams[clientID]?.record.requestBody = captured
            streams[clientID]?.record.requestBodyBytes = bytes.count
        }
    }

    private func unlistPause(_ clientID: Int32) {
        if let id = ruled.breakpoints[clientID]?.pauseID.take() { context.breakpoints.unlist(id) }
    }

    /// The stream ends: a pause of it is unlisted.
    func endBreakpoint(_ clientID: Int32) {
        if ruled.breakpoints[clientID] != nil {
            performBreakpoint(.exchangeEnded, on: clientID)
            unlistPause(clientID)
            ruled.breakpoints[clientID] = nil
        }
        endResponseBreakpoint(clientID)
    }

    /// Request fields as the web UI edited them: pseudo-headers from the method and URL, the other fields replaced
    /// (`content-length` kept: the caller sets it for an edited body).
    static func edited(_ fields: [HTTP2HeaderField], _ edit: BreakpointEdit) -> [HTTP2HeaderField] {
        var pseudo = fields.filter(\.isPseudo)
        var regular = fields.filter { !$0.isPseudo }
        func setPseudo(_ name: String, _ value: String) {
            if let index = pseudo.firstIndex(where: { $0.nameText == name }) {
                pseudo[index] = HTTP2HeaderField(name, value)
            }
        }
        if let method = edit.method { setPseudo(":method", method.uppercased()) }
        if let url = edit.url, case .absolute(let parsed)? = try? RequestTarget.parse(url, method: "GET") {
            setPseudo(":path", parsed.pathAndQuery)
        }
        if let status = edit.status { setPseudo(":status", String(status)) }
        if let headers = edit.headers {
            let length = regular.filter { $0.nameText == "content-length" }
            regular =
                headers.filter {
                    $0.count == 2 && $0[0].lowercased() != "content-length" && $0[0].lowercased() != "host"
                }
                .map { HTTP2HeaderField($0[0].lowercased(), $0[1]) } + length
        }
        return pseudo + regular
    }

    /// `request` with the method, target and headers of `fields`, for the record.
    static func edited(_ request: HTTPRequestHead, _ fields: [HTTP2HeaderField]) -> HTTPRequestHead {
        var result = request
        var headers = HTTPHeaders()
        // From :authority, which stays.
        if let host = request.headers.first("host") { headers.add(name: "host", value: host) }
        for field in fields {
            switch field.nameText {
            case ":method": result.method = field.valueText
            case ":path": result.target = field.valueText
            case let name where !field.isPseudo: headers.add(name: name, value: field.valueText)
            default: continue
            }
        }
        result.headers = headers
        return result
    }
}
