import Foundation
import MITMCore
import MITMHTTP2
import MITMIO
import MITMRules

/// What the HTTP/2 relay keeps for the QA rules, per client stream.
struct HTTP2RelayRules {
    /// A request a delay or a breakpoint holds: its head, and the body and end that arrived meanwhile (the client's
    /// window stays closed for them, so at most one stream window is held).
    struct Held {
        var fields: [HTTP2HeaderField]
        var decision: RuleDecision
        var body: [[UInt8]] = []
        var ended = false
        var trailers: [HTTP2HeaderField] = []
        /// What the rules do to the request: held until a deadline, then sent on (and kept in `exchanges` for its
        /// response).
        var exchange = RuledExchange(streams: true)
        /// Armed at the machine's deadline on the connection's clock.
        var timer: (any ClockTimer)?
    }

    var held: [Int32: Held] = [:]
    /// The rules' machines that sent their streams' requests upstream, by client stream: each takes its response.
    var exchanges: [Int32: RuledExchange] = [:]
    /// Map-local files being sent, by client stream.
    var files: [Int32: LocalFileSender] = [:]
    /// Streams at a breakpoint (see `HTTP2Relay+Breakpoints.swift`).
    var breakpoints: [Int32: HTTP2RelayBreakpoint] = [:]
    /// Responses held at a breakpoint (see `HTTP2Relay+ResponseBreakpoints.swift`).
    var heldResponses: [Int32: HTTP2HeldResponse] = [:]
    /// Streams whose body the web UI replaced at a breakpoint: the replaced bytes were taken off the sender's window
    /// already, so the edited ones leaving do not reopen it again.
    var requestBodyEdited: Set<Int32> = []
    var responseBodyEdited: Set<Int32> = []
    /// Streams whose response body the web UI replaced at a breakpoint: what the upstream still sends is dropped.
    var replacedAtBreakpoint: Set<Int32> = []

    /// Whether no stream has rule state (always, while no rule is in force).
    var isEmpty: Bool {
        held.isEmpty && exchanges.isEmpty && files.isEmpty && breakpoints.isEmpty && heldResponses.isEmpty
            && requestBodyEdited.isEmpty && responseBodyEdited.isEmpty && replacedAtBreakpoint.isEmpty
    }
}

/// The QA rules in the HTTP/2 relay: one decision per request head (`openStream`), before anything goes upstream.
/// Map remote is not here: a host that may be mapped is relayed as HTTP/1.1 (see `ProxyConnection+Rules`).
extension HTTP2Relay {
    /// Decides for a new stream and acts on local answers, breakpoints and delays; true when the stream is handled here.
    func applyRules(_ clientID: Int32, _ head: HTTPRequestHead, _ block: HTTP2HeaderBlock) -> Bool {
        let book = context.rules.current
        guard !book.rules.isEmpty else { return false }
        let decision = book.decide(
            RequestFacts(scheme: "https", host: host, port: port, method: head.method, target: head.target))
        guard !decision.isEmpty else { return false }
        streams[clientID]?.record.rules += decision.rules
        if decision.answer == nil, pauseAtRequestBreakpoint(clientID, head, block, decision) { return true }
        let held = HTTP2RelayRules.Held(fields: block.fields, decision: decision, ended: block.endStream)
        return startRuledRequest(clientID, held, head: head)
    }

    /// Hands the request (held at a breakpoint, or new) to the rules' machine and performs what it says: answer it
    /// here, hold it until its delay's deadline, or let it go on. True when the stream is handled here (answered,
    /// held, or released from its hold).
    func startRuledRequest(_ clientID: Int32, _ held: HTTP2RelayRules.Held, head: HTTPRequestHead) -> Bool {
        var held = held
        let wasHeld = ruled.held[clientID] != nil
        let now = held.decision.delay == nil ? 0 : context.clock.now()
        guard let actions = ruledActions(&held.exchange, .requestHead(held.decision, now: now), on: clientID) else {
            return true
        }
        for action in actions {
            switch action {
            case .answerLocally(let answer):
                answerByRule(clientID, RuledAnswer.make(answer, for: head, exchange: &held.exchange))
                return true
            case .wait(let deadline):
                nonisolated(unsafe) let relay = self
                held.timer = context.clock.schedule(at: deadline, on: loop) { relay.delayEnded(clientID) }
                ruled.held[clientID] = held
                return true
            case .forward where wasHeld:
                ruled.held[clientID] = held
                ruled.exchanges[clientID] = held.exchange
                releaseHeld(clientID)
                return true
            case .forward:
                ruled.exchanges[clientID] = held.exchange
                if let words = held.decision.requestWords(delayed: false), let record = streams[clientID]?.record {
                    reportRuled(held.decision, record, words)
                }
                return false
            default:
                continue
            }
        }
        return false
    }

    /// The deadline of a held request's delay passed: the machine lets it go on, or has it answered here.
    private func delayEnded(_ clientID: Int32) {
        guard var held = ruled.held[clientID] else { return }
        held.timer = nil
        guard let actions = ruledActions(&held.exchange, .deadlinePassed, on: clientID) else { return }
        ruled.held[clientID] = held
        for action in actions {
            switch action {
            case .forward:
                ruled.exchanges[clientID] = held.exchange
                releaseHeld(clientID)
            case .answerLocally(let answer):
                ruled.held[clientID] = nil
                answerByRule(
                    clientID, RuledAnswer.make(answer, for: HTTP2Heads.request(held.fields), exchange: &held.exchange))
                pump()
            default:
                continue
            }
        }
    }

    /// The actions of a stream's rules machine for `event`; nil, and the stream reset, for an event it cannot have.
    private func ruledActions(_ exchange: inout RuledExchange, _ event: RuledExchange.Event, on clientID: Int32)
        -> [RuledExchange.Action]?
    {
        do {
            return try exchange.handle(event)
        } catch {
            ruled.held[clientID] = nil
            streams[clientID]?.fail(error.description)
            resetClient(clientID, .internalError)
            return nil
        }
    }

    /// The request's fields as they go upstream: the rules' header edits applied.
    /// A request's fields as they go upstream: the rules' edits, and the origin's `:authority` behind a `--reverse` port.
    func upstreamRequestFields(_ fields: [HTTP2HeaderField], _ clientID: Int32) -> [HTTP2HeaderField] {
        let ruled = ruledRequestFields(fields, clientID)
        guard let originAuthority else { return ruled }
        let authority = Array(":authority".utf8)
        return ruled.map { field in
            var field = field
            if field.name == authority { field.value = Array(originAuthority.utf8) }
            return field
        }
    }

    func ruledRequestFields(_ fields: [HTTP2HeaderField], _ clientID: Int32) -> [HTTP2HeaderField] {
        guard let edits = ruled.exchanges[clientID]?.decision.requestHeaders, !edits.isEmpty else { return fields }
        return Self.edit(fields, edits)
    }

    /// A held request's body bytes, kept until its delay ends; true when `clientID` is held.
    func holdRequestBody(_ bytes: [UInt8], on clientID: Int32) -> Bool {
        guard ruled.held[clientID] != nil else { return false }
        ruled.held[clientID]?.body.append(bytes)
        return true
    }

    /// A held request's end (with its trailers); true when `clientID` is held.
    func holdRequestEnd(on clientID: Int32, trailers: [HTTP2HeaderField] = []) -> Bool {
        guard ruled.held[clientID] != nil else { return false }
        ruled.held[clientID]?.ended = true
        ruled.held[clientID]?.trailers = trailers
        heldRequestBodyEnded(clientID)
        return true
    }

    /// The delay of a held request ended: it goes upstream with what arrived meanwhile.
    func releaseHeld(_ clientID: Int32) {
        guard life.isServing, let held = ruled.held.removeValue(forKey: clientID), streams[clientID] != nil else {
            return
        }
        if let record = streams[clientID]?.record,
            let words = held.decision.requestWords(
                delayed: true, continuedAtBreakpoint: held.decision.breakpoint != nil)
        {
            reportRuled(held.decision, record, words)
        }
        guard let upstreamConnection, life.upstreamAvailable, upstreamConnection.isAvailable else {
            if let unreachableReason {
                answerLocally(clientID, .badGateway(host: host, port: port, reason: unreachableReason))
            } else {
                streams[clientID]?.fail(
                    "the upstream connection is going away (the client may retry on a new connection)")
                resetClient(clientID, .refusedStream)
            }
            pump()
            return
        }
        let endsWithHead = held.ended && held.body.isEmpty && held.trailers.isEmpty
        do {
            let upstreamID = try upstreamConnection.submitRequest(
                upstreamRequestFields(held.fields, clientID), endStream: endsWithHead,
                for: self)
            attachUpstream(clientID, upstreamID)
            for piece in held.body { upstreamConnection.session.send(piece, on: upstreamID) }
            if held.ended && !endsWithHead {
                upstreamConnection.session.finish(streamID: upstreamID, trailers: held.trailers)
            }
        } catch {
            answerLocally(
                clientID, .badGateway(host: host, port: port, reason: "cannot open an HTTP/2 stream: \(error.reason)"))
        }
        pump()
    }

    /// Answers a stream with a rule's answer as its machine says: the head (with its body, or followed by the file the
    /// machine hands out in pieces as the client's window allows), or a reset of the stream or close of the connection
    /// before or after the head.
    func answerByRule(_ clientID: Int32, _ local: LocalResponse) {
        guard let stream = streams[clientID] else { return }
        guard var answer = local.rule else {
            answerLocally(clientID, local)
            return
        }
        reportRuled(
            answer.decision, stream.record, answer.decision.requestWords(delayed: true, answer: answer.action) ?? "")
        let isHead = stream.record.request.method == "HEAD"
        let made = RuledExchange.Event.localAnswerMade(
            hasHead: answer.head != nil, fileLength: isHead ? 0 : answer.file?.length ?? 0)
        guard let actions = ruledActions(&answer.exchange, made, on: clientID) else { return }
        for action in actions {
            switch action {
            case .sendHead(let withBody):
                guard let ruleHead = answer.head else { continue }
                let body = withBody && !isHead ? local.body : []
                guard advance(stream, .answeredLocally(at: context.clock.wallNow(), ends: withBody)) == .sendToClient
                else { return }
                stream.record.response = HTTPResponseHead(
                    version: .http2, status: ruleHead.status, reason: "", headers: ruleHead.headers)
                stream.record.responseBodyBytes = body.count
                stream.record.responseBody.append(body)
                do {
                    try clientSession.submitResponse(
                        streamID: clientID, HTTP2Heads.fields(ruleHead), endStream: withBody && body.isEmpty)
                    if !body.isEmpty {
                        clientSession.send(body, on: clientID)
                        clientSession.finish(streamID: clientID)
                    }
                } catch {
                    resetClient(clientID, .internalError)
                    return
                }
            case .breakConnection(let fault, let afterHead):
                breakByRule(
                    clientID, fault, answer.exchange.failure(fault, afterHead: afterHead),
                    closing: afterHead
                        ? "closed by rule after the response head" : "closed by rule \(answer.decision.ruleText)")
                return
            default:
                continue
            }
        }
        if let sender = answer.file, answer.exchange.sendsFile {
            sender.start(answer.exchange)
            ruled.files[clientID] = sender
            feedFile(clientID)
        }
    }

    /// Queues more of a stream's file as its earlier pieces leave; true when `clientID` is sending a file.
    @discardableResult
    func feedFile(_ clientID: Int32) -> Bool {
        guard let sender = ruled.files[clientID] else { return false }
        while !sender.isFinished && clientSession.queuedBytes(on: clientID) < 64 * 1024 {
            switch sender.next() {
            case .success(let piece)?:
                streams[clientID]?.record.responseBodyBytes += piece.count
                streams[clientID]?.record.responseBody.append(piece)
                clientSession.send(piece, on: clientID)
            case nil:
                break
            case .failure(let reason)?:
                ruled.files[clientID] = nil
                sender.close()
                streams[clientID]?.fail(reason.description)
                resetClient(clientID, .internalError)
                return true
            }
        }
        if sender.isFinished {
            ruled.files[clientID] = nil
            sender.close()
            if let stream = streams[clientID], advance(stream, .responseEnded) == .sendToClient {
                clientSession.finish(streamID: clientID)
            }
        }
        return true
    }

    /// The response fields the client gets: the rules' status, header edits and body replacement, by the machine that
    /// sent the stream's request upstream.
    func ruledResponseFields(_ fields: [HTTP2HeaderField], _ clientID: Int32, endStream: Bool) -> (
        fields: [HTTP2HeaderField], body: [UInt8]?
    ) {
        guard var exchange = ruled.exchanges[clientID] else { return (fields, nil) }
        var edited = fields
        let status = edited.first(where: { $0.nameText == ":status" }).flatMap { Int($0.valueText) } ?? 200
        do {
            let words = try exchange.rewriteResponseHead(
                status: status, isHEAD: streams[clientID]?.record.request.method == "HEAD"
            ) { action in
                switch action {
                case .setStatus(let status):
                    if let index = edited.firstIndex(where: { $0.nameText == ":status" }) {
                        edited[index] = HTTP2HeaderField(":status", String(status))
                    }
                case .editResponseHeaders(let edits):
                    edited = Self.edit(edited, edits)
                case .replaceBody(let length):
                    edited = Self.edit(
                        edited, HeaderEdits(setFields: [HTTPHeaderField(name: "content-length", value: String(length))])
                    )
                default:
                    break
                }
            }
            if let words, let record = streams[clientID]?.record { reportRuled(exchange.decision, record, words) }
        } catch {
            ruled.exchanges[clientID] = nil
            streams[clientID]?.fail(error.description)
            resetClient(clientID, .internalError)
            return (fields, nil)
        }
        ruled.exchanges[clientID] = exchange
        return (edited, exchange.replacement)
    }

    /// After a rewritten response head went to the client: the replacement body, or the fault.
    func afterRuledResponse(_ clientID: Int32, body: [UInt8]?, upstreamEnded: Bool) {
        if let body {
            streams[clientID]?.record.responseBodyBytes = body.count
            streams[clientID]?.record.responseBody.append(body)
            clientSession.send(body, on: clientID)
            if upstreamEnded, let stream = streams[clientID], advance(stream, .responseEnded) == .sendToClient {
                clientSession.finish(streamID: clientID)
            }
        }
        guard let exchange = ruled.exchanges[clientID], let actions = ruledResponse(.responseHeadSent, on: clientID)
        else { return }
        for case .breakConnection(let fault, let afterHead) in actions {
            breakByRule(
                clientID, fault, exchange.failure(fault, afterHead: afterHead),
                closing: "closed by rule after the response head")
            return
        }
        if upstreamEnded { ruledResponse(.responseEnded, on: clientID) }
    }

    /// The actions of the stream's rules machine for a response `event`: none for a stream no rule concerns, nil (the
    /// stream reset, its record naming both) for an event the machine cannot have.
    @discardableResult
    func ruledResponse(_ event: RuledExchange.Event, on clientID: Int32) -> [RuledExchange.Action]? {
        guard var exchange = ruled.exchanges[clientID] else { return [] }
        do {
            let actions = try exchange.handle(event)
            ruled.exchanges[clientID] = exchange
            return actions
        } catch {
            ruled.exchanges[clientID] = nil
            streams[clientID]?.fail(error.description)
            resetClient(clientID, .internalError)
            return nil
        }
    }

    /// Ends a stream (it failed as `failure` says, its upstream stream cancelled) as the rule's `fault` says: a reset
    /// of the stream, or the whole connection closed for `reason`.
    private func breakByRule(_ clientID: Int32, _ fault: RuleFault, _ failure: String, closing reason: String) {
        streams[clientID]?.fail(failure)
        if let upstreamID = streams[clientID]?.upstreamID { resetUpstream(upstreamID, .cancel) }
        if fault.isReset {
            resetClient(clientID, .internalError)
        } else {
            finish(reason)
        }
    }

    /// Whether a piece of the upstream body of `clientID` is dropped: the web UI or the rules replaced the body (its
    /// rules machine says so), or the machine could not take the piece and reset the stream.
    func dropsResponseBody(_ clientID: Int32) -> Bool {
        if ruled.replacedAtBreakpoint.contains(clientID) { return true }
        guard let actions = ruledResponse(.responseBody, on: clientID) else { return true }
        return actions.contains(.dropBody)
    }

    /// Forgets a finished stream's rule state.
    func forgetRules(_ clientID: Int32) {
        guard !ruled.isEmpty else { return }
        ruled.held.removeValue(forKey: clientID)?.timer?.cancel()
        endBreakpoint(clientID)
        ruled.exchanges[clientID] = nil
        ruled.files.removeValue(forKey: clientID)?.close()
        ruled.replacedAtBreakpoint.remove(clientID)
        ruled.requestBodyEdited.remove(clientID)
        ruled.responseBodyEdited.remove(clientID)
    }

    func reportRuled(_ decision: RuleDecision, _ record: ExchangeRecord, _ action: String) {
        context.events.emit(.ruleFired(RuleFiring(on: record, rules: decision.rules, action: action)))
    }

    static func edit(_ fields: [HTTP2HeaderField], _ edits: HeaderEdits) -> [HTTP2HeaderField] {
        let removed = Set((edits.removeNames + edits.setFields.map(\.name)).map { $0.lowercased() })
        var result = fields.filter { $0.isPseudo || !removed.contains($0.nameText.lowercased()) }
        for field in edits.setFields { result.append(HTTP2HeaderField(field.name.lowercased(), field.value)) }
        return result
    }
}
