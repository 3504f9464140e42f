import Foundation
import MITMCore
import MITMRules
import MITMIO

/// A request of the HTTP/1 relay held at a breakpoint: held as a rule `delay` holds it (the head waits in the queue,
/// the client's reads paused), released by the web UI instead of a timer.
struct HTTPRelayBreakpoint {
    var machine: BreakpointMachine
    /// The pause's number in the web UI, while it is listed.
    var pauseID: Int?
    var timer: LoopTimer?
    /// The proxy's answer when the pause was aborted (or timed out).
    var abort: LocalResponse?
}

extension HTTPRelay {
    /// Pauses the head next in the queue when its decision has a request breakpoint; whether it is held.
    func pauseAtRequestBreakpoint(_ head: HTTPRequestHead) -> Bool {
        guard let (breakpoint, rule) = rules.pending?.breakpoint else {
            rules.breakpoint = nil
            return false
        }
        rules.breakpoint = HTTPRelayBreakpoint(machine: BreakpointMachine(breakpoint, rule: rule))
        return performBreakpoint(.reached(.request, now: context.clock.now()), head: head)
    }

    /// Whether an exchange of this relay waits for the web UI (the connection's idle deadline does not end it).
    var isPausedAtBreakpoint: Bool { rules.breakpoint?.machine.isPaused == true }

    /// The answer aborting the held request, if it was aborted; taken once.
    func takeBreakpointAbort() -> LocalResponse? {
        rules.breakpoint?.abort.take()
    }

    /// Feeds `event` to the machine and performs its action; whether the request stays held.
    @discardableResult
    func performBreakpoint(_ event: BreakpointMachine.Event, head: HTTPRequestHead? = nil) -> Bool {
        guard var breakpoint = rules.breakpoint else { return false }
        let action = breakpoint.machine.receive(event)
        rules.breakpoint = breakpoint
        switch action {
        case .proceed, .impossible:
            return false
        case .hold(let deadline):
            guard let head else { return true }
            listPause(head, deadline: deadline)
            return true
        case .release(let edit):
            unlistPause()
            // The body that follows is framed as the client sent it, whatever the edit did to the head.
            if let index = heldHeadIndex, case .requestHead(let held, let framing) = queuedClientEvents[index] {
                queuedClientEvents[index] = .requestHead(edited(held, edit), framing: framing)
            }
            startRuledRequest()
            if !rules.exchange.holdsRequest && !machine.isClosed { processQueuedClientEvents() }
            return false
        case .answer(let status, let reason):
            unlistPause()
            rules.breakpoint?.abort = .error(status: status, reason: reason)
            rules.pending?.answer = .fixed(FixedResponse(status: status), rule: breakpoint.machine.rule)
            startRuledRequest()
            if !machine.isClosed { processQueuedClientEvents() }
            return false
        case .forget:
            unlistPause()
            return false
        }
    }

    /// The index of the held request head in the queue.
    private var heldHeadIndex: Int? {
        guard queuedIndex < queuedClientEvents.count, case .requestHead = queuedClientEvents[queuedIndex] else { return nil }
        return queuedIndex
    }

    private func listPause(_ head: HTTPRequestHead, deadline: UInt64) {
        guard let rule = rules.breakpoint?.machine.rule else { return }
        let desk = context.breakpoints
        let id = desk.newID()
        let now = context.clock.now()
        let seconds = Double(deadline &- now) / 1e9
        let facts = ruleFacts(for: head)
        let url = facts.map { AbsoluteURL(scheme: $0.scheme, host: $0.host, port: $0.port, pathAndQuery: $0.target).text } ?? head.target
        var hostFixed = false
        if case .intercepted = mode { hostFixed = true }
        let since = Date().timeIntervalSince1970 * 1000
        nonisolated(unsafe) let relay = self
        desk.list(BreakpointDesk.Paused(id: id, phase: .request, rule: rule, connection: connectionID, method: head.method, url: url,
                                        status: nil, headers: head.headers.map { [$0.name, $0.value] }, since: since,
                                        abortsAt: since + seconds * 1000, hostFixed: hostFixed)) { [loop] answer in
            loop.execute { relay.breakpointAnswered(answer, pause: id) }
        }
        rules.breakpoint?.pauseID = id
        rules.breakpoint?.timer = loop.schedule(after: max(0, seconds)) {
            relay.rules.breakpoint?.timer = nil
            relay.performBreakpoint(.timerFired(now: relay.context.clock.now()))
        }
    }

    private func breakpointAnswered(_ answer: BreakpointDesk.Answer, pause: Int) {
        guard !machine.isClosed, rules.breakpoint?.pauseID == pause else { return }
        switch answer {
        case .continued(let edit): performBreakpoint(.continued(edit))
        case .aborted: performBreakpoint(.aborted)
        }
    }

    private func unlistPause() {
        rules.breakpoint?.timer?.cancel()
        rules.breakpoint?.timer = nil
        if let id = rules.breakpoint?.pauseID.take() { context.breakpoints.unlist(id) }
    }

    /// The relay closes: a paused exchange is unlisted.
    func endBreakpoint() {
        guard rules.breakpoint != nil else { return }
        performBreakpoint(.exchangeEnded)
        unlistPause()
    }

    /// `head` as the web UI edited it; its framing (the body is not edited) stays.
    private func edited(_ head: HTTPRequestHead, _ edit: BreakpointEdit) -> HTTPRequestHead {
        var result = head
        if let method = edit.method { result.method = method.uppercased() }
        if let fields = edit.headerFields {
            var headers = fields
            for name in ["content-length", "transfer-encoding"] {
                headers.remove(name)
                for value in head.headers.values(name) { headers.add(name: name, value: value) }
            }
            result.headers = headers
        }
        if let url = edit.url, case .absolute(let parsed)? = try? RequestTarget.parse(url, method: result.method) {
            if case .plain = mode { result.target = parsed.text } else { result.target = parsed.pathAndQuery }
        }
        return result
    }
}

extension ProxyConnection.Relay {
    /// Whether an exchange on the relay is paused at a breakpoint.
    var holdsBreakpoint: Bool {
        switch self {
        case .http1(let relay): relay.isPausedAtBreakpoint
        case .http2(let relay): relay.hasPausedStream
        default: false
        }
    }
}
