import Foundation
import MITMCore
import MITMRules
import MITMHTTP2
import MITMIO

/// A stream of the HTTP/2 relay held at a breakpoint: held as a rule `delay` holds it (`HTTP2RelayRules.Held`, the
/// client's window closed for its body), released by the web UI instead of a timer.
struct HTTP2RelayBreakpoint {
    var machine: BreakpointMachine
    var pauseID: Int?
    var timer: LoopTimer?
}

extension HTTP2Relay {
    /// Holds a new stream whose decision has a request breakpoint; whether it is held.
    func pauseAtRequestBreakpoint(_ clientID: Int32, _ head: HTTPRequestHead, _ block: HTTP2HeaderBlock, _ decision: RuleDecision) -> Bool {
        guard let (breakpoint, rule) = decision.breakpoint, breakpoint.request,
              let loop = context.loops.loops.first(where: \.isCurrent) else { return false }
        var machine = BreakpointMachine(breakpoint, rule: rule)
        guard case .hold(let deadline) = machine.receive(.reached(.request, now: context.clock.now())) else { return false }
        ruled.held[clientID] = HTTP2RelayRules.Held(fields: block.fields, decision: decision, ended: block.endStream)
        let desk = context.breakpoints
        let id = desk.newID()
        let seconds = Double(deadline &- context.clock.now()) / 1e9
        let since = Date().timeIntervalSince1970 * 1000
        nonisolated(unsafe) let relay = self
        ruled.breakpoints[clientID] = HTTP2RelayBreakpoint(machine: machine, pauseID: id, timer: loop.schedule(after: max(0, seconds)) {
            relay.ruled.breakpoints[clientID]?.timer = nil
            relay.performBreakpoint(.timerFired(now: relay.context.clock.now()), on: clientID)
        })
        let url = streams[clientID]?.record.url ?? head.target
        desk.list(BreakpointDesk.Paused(id: id, phase: .request, rule: rule, connection: connectionID, method: head.method, url: url,
                                        status: nil, headers: head.headers.map { [$0.name, $0.value] }, since: since,
                                        abortsAt: since + seconds * 1000, hostFixed: true)) { answer in
            loop.execute {
                guard relay.ruled.breakpoints[clientID]?.pauseID == id else { return }
                switch answer {
                case .continued(let edit): relay.performBreakpoint(.continued(edit), on: clientID)
                case .aborted: relay.performBreakpoint(.aborted, on: clientID)
                }
            }
        }
        return true
    }

    /// Whether a stream waits for the web UI.
    var hasPausedStream: Bool { ruled.breakpoints.values.contains { $0.machine.isPaused } }

    /// Feeds `event` to the stream's machine and performs its action.
    func performBreakpoint(_ event: BreakpointMachine.Event, on clientID: Int32) {
        guard var breakpoint = ruled.breakpoints[clientID], !closed else { return }
        let action = breakpoint.machine.receive(event)
        ruled.breakpoints[clientID] = breakpoint
        switch action {
        case .proceed, .impossible, .hold:
            return
        case .release(let edit):
            unlistPause(clientID)
            guard var held = ruled.held[clientID] else { return }
            held.fields = Self.edited(held.fields, edit)
            if let record = streams[clientID]?.record { streams[clientID]?.record.request = Self.edited(record.request, held.fields) }
            if let seconds = held.decision.delay, seconds > 0, let loop = context.loops.loops.first(where: \.isCurrent) {
                nonisolated(unsafe) let relay = self
                held.timer = loop.schedule(after: seconds) { relay.releaseHeld(clientID) }
                ruled.held[clientID] = held
                return
            }
            ruled.held[clientID] = held
            releaseHeld(clientID)
        case .answer(let status, let reason):
            unlistPause(clientID)
            ruled.held[clientID] = nil
            answerLocally(clientID, .error(status: status, reason: reason))
            pump()
        case .forget:
            unlistPause(clientID)
        }
    }

    private func unlistPause(_ clientID: Int32) {
        ruled.breakpoints[clientID]?.timer?.cancel()
        ruled.breakpoints[clientID]?.timer = nil
        if let id = ruled.breakpoints[clientID]?.pauseID.take() { context.breakpoints.unlist(id) }
    }

    /// The stream ends: a pause of it is unlisted.
    func endBreakpoint(_ clientID: Int32) {
        guard ruled.breakpoints[clientID] != nil else { return }
        performBreakpoint(.exchangeEnded, on: clientID)
        unlistPause(clientID)
        ruled.breakpoints[clientID] = nil
    }

    /// Request fields as the web UI edited them: pseudo-headers from the method and URL, the other fields replaced
    /// (`content-length` kept: the body is not edited).
    static func edited(_ fields: [HTTP2HeaderField], _ edit: BreakpointEdit) -> [HTTP2HeaderField] {
        var pseudo = fields.filter(\.isPseudo)
        var regular = fields.filter { !$0.isPseudo }
        func setPseudo(_ name: String, _ value: String) {
            if let index = pseudo.firstIndex(where: { $0.nameText == name }) { pseudo[index] = HTTP2HeaderField(name, value) }
        }
        if let method = edit.method { setPseudo(":method", method.uppercased()) }
        if let url = edit.url, case .absolute(let parsed)? = try? RequestTarget.parse(url, method: "GET") { setPseudo(":path", parsed.pathAndQuery) }
        if let headers = edit.headers {
            let length = regular.filter { $0.nameText == "content-length" }
            regular = headers.filter { $0.count == 2 && $0[0].lowercased() != "content-length" && $0[0].lowercased() != "host" }
                .map { HTTP2HeaderField($0[0].lowercased(), $0[1]) } + length
        }
        return pseudo + regular
    }

    /// `request` with the method, target and headers of `fields`, for the record.
    static func edited(_ request: HTTPRequestHead, _ fields: [HTTP2HeaderField]) -> HTTPRequestHead {
        var result = request
        var headers = HTTPHeaders()
        if let host = request.headers.first("host") { headers.add(name: "host", value: host) }  // from :authority, which stays
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
