import Foundation
import MITMCore
import MITMIO
import MITMRules

/// The rules' machine of one HTTP/1 exchange, kept with it from its request (sent on) to the end of its response. A
/// reference: an exchange no rule concerns keeps a nil pointer, not a machine's worth of bytes.
final class HTTPRelayRuledExchange {
    var machine: RuledExchange

    init(_ machine: RuledExchange) {
        self.machine = machine
    }
}

/// The QA rules in the HTTP/1 relay: one decision per request head, before anything goes upstream.
extension HTTPRelay {
    /// What the rules match a request by; nil for a request no rule can concern (the proxy's own pages, bad targets).
    func ruleFacts(for head: HTTPRequestHead) -> RequestFacts? {
        switch mode {
        case .intercepted(let host, let port), .failing(let host, let port, _):
            return RequestFacts(scheme: "https", host: host, port: port, method: head.method, target: head.target)
        case .plain:
            guard let url = plainURL(for: head) else { return nil }
            return RequestFacts(
                scheme: "http", host: url.host, port: url.port, method: head.method, target: url.pathAndQuery)
        }
    }

    /// Decides once for the head next in the queue; false while its delay runs.
    func rulesLetRequestStart(_ head: HTTPRequestHead) -> Bool {
        if rules.pending == nil {
            let book = context.rules.current
            // No rule in force, the common case: nothing to decide, delay or pause at.
            if book.rules.isEmpty { return true }
            rules.pending = ruleFacts(for: head).map { book.decide($0) } ?? RuleDecision()
            rules.exchange = RuledExchange(streams: false)
            if pauseAtRequestBreakpoint(head) { return false }
            startRuledRequest()
        }
        return !rules.exchange.holdsRequest
    }

    /// Hands the pending decision to the rules' machine: the request is let go, or held until its delay's deadline.
    func startRuledRequest() {
        let decision = rules.pending ?? RuleDecision()
        let now = decision.delay == nil ? 0 : context.clock.now()
        for action in ruledActions(.requestHead(decision, now: now)) {
            guard case .wait(let deadline) = action else { continue }
            nonisolated(unsafe) let relay = self
            rules.delayTimer = context.clock.schedule(at: deadline, on: loop) {
                relay.rules.delayTimer = nil
                _ = relay.ruledActions(.deadlinePassed)
                if !relay.machine.isClosed { relay.processQueuedClientEvents() }
            }
        }
    }

    /// The rules' machine's actions for `event`; none, and the connection closed, for an event it cannot have.
    private func ruledActions(_ event: RuledExchange.Event) -> [RuledExchange.Action] {
        do {
            return try rules.exchange.handle(event)
        } catch {
            close(reason: error.description)
            return []
        }
    }

    /// The actions of the first exchange's rules machine for a response `event`: nil when no rule concerns the
    /// exchange, and nil, with the connection closed, for an event the machine cannot have.
    @discardableResult
    func firstExchangeRuledActions(_ event: RuledExchange.Event) -> [RuledExchange.Action]? {
        guard let ruled = exchanges.first?.ruled else { return nil }
        do {
            return try ruled.machine.handle(event)
        } catch {
            close(reason: error.description)
            return nil
        }
    }

    /// The decision for the request that starts now (and forgets it).
    func takeRuleDecision() -> RuleDecision {
        rules.pending.take() ?? RuleDecision()
    }

    /// Where the next request goes when the rules route it: a mapped origin, or the interception's origin
    /// again after a mapped one; nil when the usual path applies.
    func ruledRoute() -> UpstreamRoute? {
        guard let decision = rules.pending, decision.answer == nil else { return nil }
        if let remote = decision.remote {
            return UpstreamRoute(scheme: remote.scheme, host: remote.host, port: remote.port)
        }
        if case .intercepted(let host, let port) = mode, rules.route != nil {
            return UpstreamRoute(scheme: "https", host: host, port: port)
        }
        return nil
    }

    /// Whether the upstream for `route` is ready; if not, starts reaching it once earlier exchanges are done.
    func prepareRoute(_ route: UpstreamRoute) -> Bool {
        if rules.route == route, upstream != nil { return true }
        guard exchanges.isEmpty, connecting == nil else { return false }
        upstream?.onEvent = nil
        upstream?.close()
        upstream = nil
        responseParser = HTTP1Parser(role: .response)
        upstreamTarget = (route.host, route.port)
        rules.route = route
        connecting = RouteAttempt.dial(route, guardedClient: guardedClient(), context: context, loop: loop) {
            [unowned self] result in
            connecting = nil
            switch result {
            case .success(let ready):
                newConnectionTimings = ready.timings
                attachUpstream(ready.leg)
                processQueuedClientEvents()
            case .failure(let failure):
                upstreamTarget = nil
                rules.route = nil
                rules.pending = nil
                failQueuedRequest(with: failure)
            }
        }
        return false
    }

    /// Starts a request the rules concern; false when the usual path should handle it.
    func beginRuledRequest(_ head: HTTPRequestHead, _ decision: RuleDecision, upgrade: Bool) -> Bool {
        guard let facts = ruleFacts(for: head) else { return false }
        if let abort = takeBreakpointAbort() {
            queueLocal(
                head, host: facts.host, port: facts.port, scheme: facts.scheme, response: abort, decision: decision)
            return true
        }
        if let answer = decision.answer {
            let local = RuledAnswer.make(answer, for: head, exchange: &rules.exchange)
            queueLocal(
                head, host: facts.host, port: facts.port, scheme: facts.scheme, response: local, decision: decision)
            return true
        }
        var forwarded: HTTPRequestHead
        if let remote = decision.remote {
            forwarded = HopByHopFields.forwarding(head, authority: remote.authority, upgrading: upgrade)
            forwarded.target = remote.target
        } else {
            switch mode {
            case .intercepted:
                forwarded = HopByHopFields.forwarding(head, authority: originAuthority, upgrading: upgrade)
            case .plain:
                guard let url = plainURL(for: head) else { return false }
                forwarded = forwardedPlain(head, to: url, upgrading: upgrade)
            case .failing:
                return false
            }
        }
        decision.requestHeaders.apply(to: &forwarded.headers)
        forward(
            forwarded, original: head, host: facts.host, port: facts.port, scheme: facts.scheme, upgrade: upgrade,
            ruled: rules.exchange)
        return true
    }

    /// Announces what the rules did to a request (its delay, where it was sent, its header edits, or the local
    /// `answer` made instead), if they did any of these.
    func reportRules(_ decision: RuleDecision, record: ExchangeRecord, answer: String? = nil) {
        guard !decision.isEmpty, let words = decision.requestWords(delayed: true, answer: answer) else { return }
        context.events.emit(.ruleFired(RuleFiring(on: record, rules: decision.rules, action: words)))
    }

    /// The response head the client gets: the rules' status, headers and body replaced for the first exchange, by the
    /// machine that sent its request on.
    func ruledResponseHead(_ head: HTTPResponseHead) -> HTTPResponseHead {
        guard let first = exchanges.first, let ruled = first.ruled else { return head }
        var rewritten = head
        do {
            let words = try ruled.machine.rewriteResponseHead(
                status: head.status, isHEAD: first.record.request.method == "HEAD"
            ) { action in
                switch action {
                case .setStatus(let status):
                    rewritten.status = status
                    rewritten.reason = LocalResponse.phrase(status)
                case .editResponseHeaders(let edits):
                    edits.apply(to: &rewritten.headers)
                case .replaceBody(let length):
                    rewritten.headers.remove("Transfer-Encoding")
                    rewritten.headers.replaceOrAdd(name: "Content-Length", value: String(length))
                    perform(machine.receive(.responseBodyReplaced))
                default:
                    break
                }
            }
            if let words {
                let firing = RuleFiring(on: first.record, rules: ruled.machine.decision.rules, action: words)
                context.events.emit(.ruleFired(firing))
            }
        } catch {
            close(reason: error.description)
            return head
        }
        return rewritten
    }

    /// After the first exchange's (rewritten) head went out: its replacement body, or its fault. Returns false when
    /// the relay closed.
    /// The body the web UI gave at a breakpoint (`bodyEditedAtBreakpoint`) went out instead of the rule's.
    func afterRuledResponseHead(bodyEditedAtBreakpoint: Bool = false) -> Bool {
        guard let ruled = exchanges.first?.ruled else { return true }
        guard let actions = firstExchangeRuledActions(.responseHeadSent) else { return false }
        for action in actions {
            switch action {
            case .sendBody(let body) where !bodyEditedAtBreakpoint:
                exchanges[0].record.responseBodyBytes += body.count
                exchanges[0].record.responseBody.append(body)
                client.write(body)
            case .breakConnection(let fault, let afterHead):
                breakByRule(
                    fault, ending: exchanges.removeFirst().record, ruled.machine.failure(fault, afterHead: afterHead))
                return false
            default:
                break
            }
        }
        return true
    }

    /// Ends the exchange of `record` (it failed as `failure` says) and the connection as the rule's `fault` says.
    private func breakByRule(_ fault: RuleFault, ending record: ExchangeRecord, _ failure: String) {
        var record = record
        record.finished = context.clock.wallNow()
        record.failure = failure
        context.events.emit(.exchange(record))
        breakConnection(reset: fault.isReset, reason: "rule: \(fault.rawValue)")
    }

    /// Ends the connection as a fault rule says: a reset at once, or a FIN after what was written.
    func breakConnection(reset: Bool, reason: String) {
        if reset {
            client.uncork()  // what was written so far (the response head) leaves before the reset
            client.reset()
            close(reason: reason)
        } else {
            exchanges.removeAll()
            closeAfterFlush()
        }
    }

    /// Sends a rule's local answer as its machine says: the head (with its body, or followed by the file the machine
    /// hands out in pieces), or a break of the connection before or after the head. Returns false when the answer
    /// continues later (a file being streamed) or the connection is broken or closing.
    func sendRuledAnswer(_ pending: PendingExchange, _ local: LocalResponse, _ answer: RuledAnswer) -> Bool {
        reportRules(answer.decision, record: pending.record, answer: answer.action)
        let isHead = pending.record.request.method == "HEAD"
        var exchange = answer.exchange
        let made = RuledExchange.Event.localAnswerMade(
            hasHead: answer.head != nil, fileLength: isHead ? 0 : answer.file?.length ?? 0)
        let actions: [RuledExchange.Action]
        do {
            actions = try exchange.handle(made)
        } catch {
            close(reason: error.description)
            return false
        }
        let response = local.head(keepAlive: pending.clientKeepsAlive && !machine.clientHasEnded)
        for action in actions {
            switch action {
            case .sendHead(let withBody):
                pending.record.response = response
                pending.responseStarted = context.clock.wallNow()
                let body = withBody && !isHead ? local.body : []
                client.write(response.serialized() + body)
                if withBody && !isHead {
                    pending.record.responseBodyBytes = body.count
                    pending.record.responseBody.append(body)
                }
            case .breakConnection(let fault, let afterHead):
                breakByRule(fault, ending: pending.record, exchange.failure(fault, afterHead: afterHead))
                return false
            default:
                break
            }
        }
        if let sender = answer.file, exchange.sendsFile {
            sender.start(exchange)
            rules.sender = sender
            sender.exchange = pending
            pumpFileAnswer()
            return false
        }
        pending.complete(at: context.clock.wallNow())
        context.events.emit(.exchange(pending.record))
        if !response.keepAlive {
            closeAfterFlush()
            return false
        }
        return true
    }

    /// Streams the file answer while the client takes it; the client's `.drained` calls again.
    func pumpFileAnswer() {
        guard let sender = rules.sender, !machine.isClosed, rules.filePump.enter() else { return }
        defer { rules.filePump.leave() }
        while !sender.isFinished && client.outputRoom(below: Self.highWater) > 0 && !machine.isClosed {
            switch sender.next() {
            case nil:
                break
            case .success(let chunk)?:
                sender.exchange?.record.responseBodyBytes += chunk.count
                sender.exchange?.record.responseBody.append(chunk)
                client.write(chunk)
            case .failure(let reason)?:
                rules.sender = nil
                if let exchange = sender.exchange {
                    exchange.record.failure = reason.description
                    exchange.record.finished = context.clock.wallNow()
                    context.events.emit(.exchange(exchange.record))
                }
                close(reason: "map-local: \(reason)")
                return
            }
        }
        guard sender.isFinished, !machine.isClosed else { return }
        rules.sender = nil
        rules.filePump.leave()
        sender.close()
        guard let exchange = sender.exchange else { return }
        exchange.complete(at: context.clock.wallNow())
        context.events.emit(.exchange(exchange.record))
        if exchange.record.response?.keepAlive == false {
            closeAfterFlush()
            return
        }
        sendLocalResponses()
        if exchanges.isEmpty {
            if machine.clientIsDone { closeAfterFlush() }
            processQueuedClientEvents()
        }
    }
}
