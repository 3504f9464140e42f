import MITMCore

/// What the rules do to one exchange, from its request head to the end of its answer, for HTTP/1 and HTTP/2 alike:
/// the rule book's decision turned into actions the relay performs (hold the request until a deadline, send it on,
/// answer it locally, rewrite the response head, replace its body, stream a file answer piece by piece, break the
/// connection). One machine covers the exchange: the one that sent the request on takes its response too, a pause of
/// the response at a breakpoint included. The relay owns the sockets, the timers and the files; an event the state
/// cannot have is thrown as `ImpossibleEvent`, naming both.
package struct RuledExchange: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        /// The request head has not been decided yet.
        case awaitingRequest
        /// A delay holds the request until `deadline` (nanoseconds on the relay's monotonic clock).
        case delayed(until: UInt64)
        /// The request went on to its upstream; the response head is awaited.
        case forwarded
        /// The final response head is held at a breakpoint until the web UI answers.
        case responseAtBreakpoint
        /// The response head is rewritten; the relay reads the replacement body from the `bodyFile`.
        case readingReplacement(words: [String])
        /// The (rewritten) response head is ready to go to the client; then `replacement`, if any, replaces the body.
        case headReady(replacement: [UInt8]?)
        /// The response head went out: the upstream body follows, or is dropped when the rules replaced it.
        case relayingBody(dropsUpstreamBody: Bool)
        /// The relay makes the rule's local answer (files are opened then).
        case answering
        /// A file answers: `remaining` bytes from `offset` still to send.
        case sendingFile(offset: Int, remaining: Int)
        /// Answered, or broken by a fault.
        case finished
    }

    package enum Event: Sendable, Equatable {
        /// The request head arrived and the rules decided about it; `now` on the relay's monotonic clock.
        case requestHead(RuleDecision, now: UInt64)
        /// The delay's deadline passed.
        case deadlinePassed
        /// The upstream's response head with `status` arrived (or, after a breakpoint, the head the web UI edited).
        case responseHead(status: Int)
        /// The final response head is held at a breakpoint.
        case responseHeldAtBreakpoint
        /// The web UI answered the held response: `continued` (its edited head comes next), or aborted (the proxy
        /// answers instead, and the exchange ends).
        case breakpointAnswered(continued: Bool)
        /// A piece of the upstream's response body arrived.
        case responseBody
        /// The upstream's response ended.
        case responseEnded
        /// The `bodyFile` was read (or why not), for a response to a `HEAD` request or not.
        case replacementRead(Result<[UInt8], ReplacementFailure>, isHEAD: Bool)
        /// The response head went to the client.
        case responseHeadSent
        /// The local answer is made: with a head or not (a fault before it), and a file of `fileLength` bytes to stream
        /// as its body (0 when the body is in the answer, or the request is a `HEAD`).
        case localAnswerMade(hasHead: Bool, fileLength: Int)
        /// The local answer could not be made: the proxy answers with its own error instead.
        case localAnswerRefused
        /// The client can take more of the file answer.
        case clientHasRoom
        /// A piece of the file could not be read.
        case fileFailed
    }

    /// Why the `bodyFile` could not be read, in words.
    package struct ReplacementFailure: Error, Sendable, Equatable {
        package let reason: String
        package init(_ reason: String) { self.reason = reason }
    }

    package enum Action: Sendable, Equatable {
        /// Hold the request until `deadline`, then send `.deadlinePassed`.
        case wait(until: UInt64)
        /// Send the request on, its headers edited by `edits`.
        case forward(edits: HeaderEdits)
        /// Make the local answer (then send `.localAnswerMade` or `.localAnswerRefused`).
        case answerLocally(RuleDecision.LocalAnswer)
        /// Put `status` in the response head.
        case setStatus(Int)
        /// Edit the response head's fields.
        case editResponseHeaders(HeaderEdits)
        /// Read `path` whole (then send `.replacementRead`).
        case readReplacement(path: String)
        /// The body is replaced: the head says `contentLength`, and the upstream's body is dropped.
        case replaceBody(contentLength: Int)
        /// Announce what the rules did to the response, in words.
        case report(String)
        /// Send the response head (with the answer's own body when `withBody`).
        case sendHead(withBody: Bool)
        /// Send the replacement body after the head.
        case sendBody([UInt8])
        /// Drop the upstream's body piece: the rules replaced the body.
        case dropBody
        /// Send `count` bytes of the file from `offset`.
        case sendFilePiece(offset: Int, count: Int)
        /// The file answer is complete.
        case endFileAnswer
        /// Stop the file answer: a piece could not be read.
        case abandonFileAnswer
        /// Break the connection (or stream) as `fault` says, before or after the head.
        case breakConnection(RuleFault, afterHead: Bool)
    }

    package struct ImpossibleEvent: Error, Sendable, Equatable, CustomStringConvertible {
        package let event: Event
        package let state: State

        package init(event: Event, state: State) {
            self.event = event
            self.state = state
        }

        package var description: String { "the rules' exchange machine got \(event) while \(state)" }
    }

    /// How much of a file answer is sent at once.
    package static let filePiece = 64 * 1024

    package private(set) var state: State = .awaitingRequest
    /// The decision taken at the request head.
    package private(set) var decision = RuleDecision()
    /// Whether the exchange is an HTTP/2 stream, which a reset ends alone.
    private let streams: Bool
    /// What a fault after the head breaks, in the words of the log.
    private var resetSubject: String { streams ? "stream" : "connection" }

    /// A machine for an exchange on HTTP/2 (`streams`) or HTTP/1.
    package init(streams: Bool) {
        self.streams = streams
    }

    /// Whether the request waits for a delay or a decision.
    package var holdsRequest: Bool {
        switch state {
        case .awaitingRequest, .delayed: true
        default: false
        }
    }

    /// Whether the upstream's response body is dropped (the rules replaced it).
    package var dropsUpstreamBody: Bool {
        switch state {
        case .headReady(let replacement): replacement != nil
        case .relayingBody(let drops): drops
        default: false
        }
    }

    /// Whether a file answer is being sent.
    package var sendsFile: Bool {
        if case .sendingFile = state { true } else { false }
    }

    /// Why the exchange failed when the rules broke it with `fault` (before or after the head), for its record.
    package func failure(_ fault: RuleFault, afterHead: Bool) -> String {
        let when = afterHead ? " after the response head" : ""
        return fault.isReset
            ? "the \(resetSubject) was reset\(when) by rule" : "the connection was closed\(when) by rule"
    }

    /// The body that replaces the upstream's, once the head is ready.
    package var replacement: [UInt8]? {
        guard case .headReady(let replacement) = state else { return nil }
        return replacement
    }

    /// The request is no longer held: answered here, or sent on.
    private mutating func letGo() -> [Action] {
        if let answer = decision.answer {
            state = .answering
            return [.answerLocally(answer)]
        }
        state = .forwarded
        return [.forward(edits: decision.requestHeaders)]
    }

    package mutating func handle(_ event: Event) throws(ImpossibleEvent) -> [Action] {
        switch (state, event) {
        case (.awaitingRequest, .requestHead(let decision, let now)):
            self.decision = decision
            // Every rule that covers the request applies: a delay holds it before it is answered or sent on.
            if let seconds = decision.delay, seconds > 0 {
                let deadline = ConnectionDeadline.instant(seconds, after: now)
                state = .delayed(until: deadline)
                return [.wait(until: deadline)]
            }
            return letGo()
        case (.delayed, .deadlinePassed):
            return letGo()
        case (.forwarded, .responseHead(let status)):
            // An interim response passes as it is; the final one (or 101) is rewritten.
            guard status >= 200 || status == 101 else { return [] }
            return rewriteHead(status: status)
        case (.forwarded, .responseHeldAtBreakpoint):
            state = .responseAtBreakpoint
            return []
        case (.responseAtBreakpoint, .breakpointAnswered(let continued)):
            state = continued ? .forwarded : .finished
            return []
        case (.readingReplacement(var words), .replacementRead(let read, let isHEAD)):
            var actions: [Action] = []
            var replacement: [UInt8]?
            switch read {
            case .success(let bytes):
                actions.append(.replaceBody(contentLength: bytes.count))
                replacement = isHEAD ? [] : bytes
                words.append("body replaced by \(decision.bodyFile ?? "") (\(ByteCountText.format(bytes.count)))")
            case .failure(let failure):
                words.append("body not replaced: \(failure.reason)")
            }
            return actions + headReady(replacement, words: words)
        case (.headReady(let replacement), .responseHeadSent):
            var actions: [Action] = []
            if let replacement, !replacement.isEmpty { actions.append(.sendBody(replacement)) }
            if let fault = decision.faultAfterHeaders {
                state = .finished
                return actions + [.breakConnection(fault, afterHead: true)]
            }
            state = .relayingBody(dropsUpstreamBody: replacement != nil)
            return actions
        case (.answering, .localAnswerMade(let hasHead, let fileLength)):
            guard hasHead else {
                state = .finished
                guard case .fault(let fault, _)? = decision.answer else {
                    return [.breakConnection(.closeBeforeHeaders, afterHead: false)]
                }
                return [.breakConnection(fault, afterHead: false)]
            }
            if let fault = decision.faultAfterHeaders {
                state = .finished
                return [.sendHead(withBody: false), .breakConnection(fault, afterHead: true)]
            }
            guard fileLength > 0 else {
                state = .finished
                return [.sendHead(withBody: true)]
            }
            state = .sendingFile(offset: 0, remaining: fileLength)
            return [.sendHead(withBody: false)]
        case (.answering, .localAnswerRefused):
            state = .finished
            return []
        case (.sendingFile(let offset, let remaining), .clientHasRoom):
            let count = min(remaining, Self.filePiece)
            guard count < remaining else {
                state = .finished
                return [.sendFilePiece(offset: offset, count: count), .endFileAnswer]
            }
            state = .sendingFile(offset: offset + count, remaining: remaining - count)
            return [.sendFilePiece(offset: offset, count: count)]
        case (.sendingFile, .fileFailed):
            state = .finished
            return [.abandonFileAnswer]
        case (.relayingBody(let dropsUpstreamBody), .responseBody):
            return dropsUpstreamBody ? [.dropBody] : []
        case (.relayingBody, .responseEnded):
            state = .finished
            return []
        default:
            throw ImpossibleEvent(event: event, state: state)
        }
    }

    /// The rules' status and header edits; the replacement body is read next, if there is one.
    private mutating func rewriteHead(status: Int) -> [Action] {
        guard decision.rewritesResponse else {
            state = .headReady(replacement: nil)
            return []
        }
        var actions: [Action] = []
        var words: [String] = []
        if let replaced = decision.status {
            actions.append(.setStatus(replaced))
            words.append("status \(status) replaced by \(replaced)")
        }
        if !decision.responseHeaders.isEmpty {
            actions.append(.editResponseHeaders(decision.responseHeaders))
            words.append("response headers edited")
        }
        if let path = decision.bodyFile {
            state = .readingReplacement(words: words)
            return actions + [.readReplacement(path: path)]
        }
        return actions + headReady(nil, words: words)
    }

    private mutating func headReady(_ replacement: [UInt8]?, words: [String]) -> [Action] {
        var words = words
        if let fault = decision.faultAfterHeaders {
            words.append(
                fault.isReset
                    ? "reset the \(resetSubject) after the response head"
                    : "closed the connection after the response head")
        }
        state = .headReady(replacement: replacement)
        return [.report(words.joined(separator: "; "))]
    }
}
