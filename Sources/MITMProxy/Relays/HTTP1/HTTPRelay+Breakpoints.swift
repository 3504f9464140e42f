import Foundation
import MITMCore
import MITMIO
import MITMRules
import MITMWebUI

/// A request of the HTTP/1 relay held at a breakpoint: held as a rule `delay` holds it (the head waits in the queue,
/// the client's reads paused), released by the web UI instead of a timer.
struct HTTPRelayBreakpoint {
    var machine: BreakpointMachine
    /// The pause's number in the web UI, while it is listed.
    var pauseID: Int?
    /// The proxy's answer when the pause was aborted (or timed out).
    var abort: LocalResponse?
    /// The pause was listed before its body was whole (the listing is told when it is).
    var listedWithoutBody = false
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
    var isPausedAtBreakpoint: Bool {
        rules.breakpoint?.machine.isPaused == true || rules.heldResponse?.machine.isPaused == true
    }

    /// The connection's sweep: a pause whose deadline passed at `now` is aborted.
    func sweepBreakpoints(now: UInt64) {
        if rules.breakpoint?.machine.deadlinePassed(at: now) == true { performBreakpoint(.timerFired(now: now)) }
        if rules.heldResponse?.machine.deadlinePassed(at: now) == true {
            performResponseBreakpoint(.timerFired(now: now))
        }
    }

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
            if let index = heldHeadIndex { applyEdit(edit, toHeadAt: index) }
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
        guard queuedIndex < queuedClientEvents.count, case .requestHead = queuedClientEvents[queuedIndex] else {
            return nil
        }
        return queuedIndex
    }

    /// The body queued behind the head at `index`, when all of it is there (its end queued too).
    private func queuedBody(after index: Int) -> (bytes: [UInt8], end: Int)? {
        let following = queuedClientEvents[(index + 1)...]
        guard let end = following.firstIndex(where: { if case .body = $0 { false } else { true } }),
            case .end = queuedClientEvents[end]
        else { return nil }
        var bytes: [UInt8] = []
        for case .body(let piece) in queuedClientEvents[(index + 1)..<end] { bytes += piece }
        return (bytes, end)
    }

    /// Whether the client is read on while its request is paused: until the body is whole or `PausedBody.editLimit`
    /// bytes of it are queued, so that a body sent just after its head can be edited. A body that came whole since the
    /// pause was listed is shown now.
    func readsOnAtBreakpoint() -> Bool {
        guard let breakpoint = rules.breakpoint, breakpoint.machine.isPaused, let index = heldHeadIndex else {
            return false
        }
        if let body = queuedBody(after: index) {
            if breakpoint.listedWithoutBody, let id = breakpoint.pauseID {
                rules.breakpoint?.listedWithoutBody = false
                context.breakpoints.update(id, body: .of(body.bytes))
            }
            return false
        }
        var queued = 0
        for event in queuedClientEvents[(index + 1)...] { if case .body(let piece) = event { queued += piece.count } }
        return queued < PausedBody.editLimit && !machine.clientHasEnded
    }

    private func listPause(_ head: HTTPRequestHead, deadline: UInt64) {
        guard let rule = rules.breakpoint?.machine.rule else { return }
        let facts = ruleFacts(for: head)
        let url =
            facts.map { AbsoluteURL(scheme: $0.scheme, host: $0.host, port: $0.port, pathAndQuery: $0.target).text }
            ?? head.target
        var hostFixed = false
        if case .intercepted = mode { hostFixed = true }
        let body = heldHeadIndex.map { PausedBody.of(queuedBody(after: $0)?.bytes) } ?? .of(nil)
        rules.breakpoint?.listedWithoutBody = body.size == nil
        let exchange = BreakpointPause.Exchange(
            phase: .request, rule: rule, connection: connectionID, method: head.method, url: url,
            status: nil, headers: head.headers.map { [$0.name, $0.value] }, body: body,
            hostFixed: hostFixed)
        nonisolated(unsafe) let relay = self
        rules.breakpoint?.pauseID = context.breakpoints.hold(
            exchange, deadline: deadline, clock: context.clock, loop: loop
        ) { answer, id in
            guard !relay.machine.isClosed, relay.rules.breakpoint?.pauseID == id else { return }
            relay.performBreakpoint(answer.event)
        }
    }

    private func unlistPause() {
        if let id = rules.breakpoint?.pauseID.take() { context.breakpoints.unlist(id) }
    }

    /// The relay closes: a paused exchange is unlisted.
    func endBreakpoint() {
        if rules.breakpoint != nil {
            performBreakpoint(.exchangeEnded)
            unlistPause()
        }
        endResponseBreakpoint()
    }

    /// Puts the web UI's edit on the queued head at `index`: the body, when edited, replaces the one queued behind the
    /// head and is framed by its length; otherwise the body that follows is framed as the client sent it.
    private func applyEdit(_ edit: BreakpointEdit, toHeadAt index: Int) {
        guard case .requestHead(let held, var framing) = queuedClientEvents[index] else { return }
        var head = Self.edited(held, edit, plain: { if case .plain = mode { true } else { false } }())
        if let text = edit.body, let queued = queuedBody(after: index) {
            let bytes = Array(text.utf8)
            head.headers.remove("transfer-encoding")
            head.headers.remove("content-length")
            if !bytes.isEmpty || held.headers.contains("content-length") || held.headers.contains("transfer-encoding") {
                head.headers.add(name: "Content-Length", value: String(bytes.count))
            }
            framing = bytes.isEmpty ? .none : .contentLength(bytes.count)
            let replaced: [HTTP1Event] = (bytes.isEmpty ? [] : [.body(bytes)]) + [.end(trailers: nil)]
            queuedClientEvents.replaceSubrange((index + 1)...queued.end, with: replaced)
        }
        queuedClientEvents[index] = .requestHead(head, framing: framing)
    }

    /// `head` as the web UI edited it; its framing headers stay (the caller sets them for an edited body).
    static func edited(_ head: HTTPRequestHead, _ edit: BreakpointEdit, plain: Bool) -> HTTPRequestHead {
        var result = head
        if let method = edit.method { result.method = method.uppercased() }
        if let fields = edit.headerFields { result.headers = HTTPHeaders.keepingFraming(of: head.headers, in: fields) }
        if let url = edit.url, case .absolute(let parsed)? = try? RequestTarget.parse(url, method: result.method) {
            result.target = plain ? parsed.text : parsed.pathAndQuery
        }
        return result
    }
}

extension HTTPHeaders {
    /// `fields` with the framing headers (`Content-Length`, `Transfer-Encoding`) of `original` instead of their own.
    static func keepingFraming(of original: HTTPHeaders, in fields: HTTPHeaders) -> HTTPHeaders {
        var headers = fields
        for name in ["content-length", "transfer-encoding"] {
            headers.remove(name)
            for value in original.values(name) { headers.add(name: name, value: value) }
        }
        return headers
    }
}

extension BreakpointPause.Answer {
    /// The machine's event for the web UI's answer.
    var event: BreakpointMachine.Event {
        switch self {
        case .continued(let edit): .continued(edit)
        case .aborted: .aborted
        }
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

    /// The connection's sweep at `now`: pauses past their deadline are aborted.
    func sweepBreakpoints(now: UInt64) {
        switch self {
        case .http1(let relay): relay.sweepBreakpoints(now: now)
        case .http2(let relay): relay.sweepBreakpoints(now: now)
        default: return
        }
    }
}
