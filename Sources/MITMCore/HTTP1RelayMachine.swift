/// The state of an HTTP/1 relay between a client and its upstream: the relay's life, the request going upstream, the
/// response coming back, and whose reads wait for whom. Events in, actions out; the relay (the I/O owner) performs the
/// actions on its legs and keeps the exchanges' records. Bodies are framed as the parser found them.
package struct HTTP1RelayMachine: Sendable, Equatable {
    package enum Life: Sendable, Equatable {
        /// Requests and responses flow.
        case relaying
        /// What is queued for the client goes out, then FIN; its input is read and dropped until it hangs up.
        case lingering
        /// Both sides are closed.
        case closed
        /// The connection was handed to a raw relay after `101 Switching Protocols`.
        case upgraded
    }

    /// The request the client is sending (the last one begun).
    package enum RequestHalf: Sendable, Equatable {
        /// No request is open: the next client event is a request head.
        case awaitingHead
        /// The head was taken; its body follows, framed like this.
        case body(HTTP1BodyFraming)
    }

    package enum ClientInput: Sendable, Equatable {
        case open
        /// The client closed its side (it may still read).
        case ended
    }

    /// The response at the head of the queue.
    package enum ResponseHalf: Sendable, Equatable {
        /// Its final head has not arrived (1xx heads may come and go before it).
        case awaitingHead
        /// The head went to the client; the upstream's body follows, framed for the client like this (the upstream's
        /// framing, unless the rules rewrote the status).
        case body(HTTP1BodyFraming)
        /// The head went to the client with a body the rules chose: the upstream's body is dropped.
        case replaced
        /// `101 Switching Protocols` to a request that asked for it: at its end the connection becomes a tunnel.
        case switchingProtocols
    }

    package enum UpstreamInput: Sendable, Equatable {
        case open
        /// The upstream closed its side: the connection can carry no other exchange.
        case ended
    }

    /// Whose reads are paused, and why.
    package struct Pauses: OptionSet, Sendable, Equatable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The client's: a request waits in the queue (for its upstream, a rule's delay, earlier responses).
        package static let clientForQueue = Pauses(rawValue: 1)
        /// The client's: more than the high-water mark waits to go upstream.
        package static let clientForUpstream = Pauses(rawValue: 2)
        /// The upstream's: more than the high-water mark waits to go to the client.
        package static let upstreamForClient = Pauses(rawValue: 4)
        /// The upstream's: its response waits at a breakpoint for the web UI.
        package static let upstreamForBreakpoint = Pauses(rawValue: 8)
    }

    /// What the relay knows about the exchange at the head of the queue when a response head arrives.
    package enum AwaitedResponse: Sendable, Equatable {
        /// No forwarded request waits for a response (none, or a local answer is first).
        case nothing
        case response
        /// A response, or `101` to the upgrade the request asked for.
        case responseOrUpgrade
    }

    package enum Event: Sendable, Equatable {
        /// The parser read a request head; the relay starts the request.
        case requestHead(HTTP1BodyFraming)
        case requestBody
        case requestEnd
        /// The client closed its side.
        case clientInputEnded
        /// A connection to the upstream is there (new, or given back).
        case upstreamAttached
        case responseHead(status: Int, framing: HTTP1BodyFraming, awaited: AwaitedResponse)
        /// The rules replaced the body of the response whose head just went out.
        case responseBodyReplaced
        /// The rules rewrote the status of the response whose head went out as `head` (to a request with `method`): the
        /// client reads its body as that head frames it (a 204 made 200 without a length is read until close).
        case responseStatusRewritten(HTTPResponseHead, requestMethod: String)
        case responseBody
        /// The response ended; whether each hop's connection persists after it (RFC 9112 §9.3).
        case responseEnd(upstreamKeepsAlive: Bool, clientKeepsAlive: Bool)
        /// The upstream closed its side.
        case upstreamInputEnded
        /// A request must wait in the queue / the queue is empty again.
        case requestWaits
        case requestsFlow
        /// The upstream's output went above the high-water mark / was written out.
        case upstreamFull
        case upstreamDrained
        /// The client's output went above the high-water mark / was written out.
        case clientFull
        case clientDrained
        /// The response at the head of the queue is held at a breakpoint (no more of the upstream is read) / released.
        case responseHeld
        case responseReleased
        /// End the client's connection once what is queued for it is out.
        case closeAfterFlush
        /// Close both sides now.
        case close
        /// The connection went to a raw relay.
        case upgraded
    }

    /// What to do after a response ended.
    package enum AfterResponse: Sendable, Equatable {
        /// Hand the connection to a raw relay (after `101`).
        case upgrade
        /// The upstream's connection ends here (its body was close-delimited, or it said close): end both.
        case closeBoth
        /// The client said close: end its connection, and keep the upstream's when it allows reuse.
        case closeClientKeepingUpstream
        /// Go on with the next exchange.
        case nextExchange
    }

    /// An event the relay's states cannot take: the parser or the relay broke an ordering it guarantees.
    package enum ImpossibleEvent: String, Sendable, Equatable {
        case requestHeadInsideARequest = "a request head arrived while the previous request's body was open"
        case requestBodyOutsideARequest = "request body bytes arrived outside a request"
        case requestEndOutsideARequest = "a request ended that had not begun"
        case responseHeadInsideAResponse = "a response head arrived while the previous response's body was open"
        case responseBodyWithoutAHead = "response body bytes arrived before their head"
        case bodyReplacedWithoutAHead = "a response body was replaced before its head went out"
        case upgradeWhileNotRelaying = "a connection that was no longer relaying was upgraded"
    }

    /// Why a response head is refused (the upstream is then treated as broken).
    package enum ResponseRefusal: String, Sendable, Equatable {
        case unasked = "sent a response nobody asked for"
        // Switching protocols unasked would turn the connection into a raw tunnel nothing records.
        case unaskedUpgrade = "answered 101 Switching Protocols to a request that asked for no upgrade"
    }

    package enum Action: Sendable, Equatable {
        case none
        /// Write the body bytes as they are.
        case forward
        /// Write the body bytes as one chunk.
        case forwardAsChunk
        /// Drop the body bytes.
        case discard
        /// Write the last chunk and the trailers.
        case writeLastChunk
        /// Relay a 1xx head; the final response follows.
        case relayInterimHead
        /// Relay the final head (or `101`).
        case relayHead
        case refuseResponse(ResponseRefusal)
        /// The response ended: write its last chunk and trailers first when it was chunked.
        case endChunkedResponse(then: AfterResponse)
        case endResponse(then: AfterResponse)
        case pauseClient
        case resumeClient
        case pauseUpstream
        case resumeUpstream
        /// Send what is queued to the client, then FIN; keep reading it until it hangs up.
        case linger
        /// Close both sides now.
        case closeNow
        case impossible(ImpossibleEvent)
    }

    package private(set) var life = Life.relaying
    package private(set) var request = RequestHalf.awaitingHead
    package private(set) var clientInput = ClientInput.open
    package private(set) var response = ResponseHalf.awaitingHead
    package private(set) var upstreamInput = UpstreamInput.open
    package private(set) var pauses: Pauses = []

    package init() {}

    /// Takes `event`; returns what to do.
    package mutating func receive(_ event: Event) -> Action {
        switch event {
        case .requestHead(let framing):
            guard request == .awaitingHead else { return .impossible(.requestHeadInsideARequest) }
            request = .body(framing)
            return .none
        case .requestBody:
            guard case .body(let framing) = request else { return .impossible(.requestBodyOutsideARequest) }
            return framing == .chunked ? .forwardAsChunk : .forward
        case .requestEnd:
            guard case .body(let framing) = request else { return .impossible(.requestEndOutsideARequest) }
            request = .awaitingHead
            return framing == .chunked ? .writeLastChunk : .none
        case .clientInputEnded:
            clientInput = .ended
            return .none
        case .upstreamAttached:
            upstreamInput = .open
            return .none
        case .responseHead(let status, let framing, let awaited):
            return responseHead(status: status, framing: framing, awaited: awaited)
        case .responseBodyReplaced:
            switch response {
            case .awaitingHead: return .impossible(.bodyReplacedWithoutAHead)
            case .body, .replaced: response = .replaced
            case .switchingProtocols: break
            }
            return .none
        case .responseStatusRewritten(let head, let method):
            guard case .body(let framing) = response else { return .none }  // a replaced body or 101 keeps its framing
            // Chunks are still encoded as the upstream's were; any other body is relayed as it comes.
            guard framing != .chunked else { return .none }
            if head.mayHaveBody(toRequestMethod: method) && !head.headers.contains("content-length") {
                response = .body(.closeDelimited)
            } else if framing == .closeDelimited {
                response = .body(.none)
            }
            return .none
        case .responseBody:
            switch response {
            case .body(.chunked): return .forwardAsChunk
            case .body: return .forward
            case .replaced: return .discard
            case .awaitingHead, .switchingProtocols: return .impossible(.responseBodyWithoutAHead)
            }
        case .responseEnd(let upstreamKeepsAlive, let clientKeepsAlive):
            return responseEnd(upstreamKeepsAlive: upstreamKeepsAlive, clientKeepsAlive: clientKeepsAlive)
        case .upstreamInputEnded:
            upstreamInput = .ended
            return .none
        case .requestWaits:
            return pause(.clientForQueue, .pauseClient)
        case .requestsFlow:
            guard pauses.contains(.clientForQueue), !isClosed else { return .none }
            pauses.remove(.clientForQueue)
            return .resumeClient
        case .upstreamFull:
            return pause(.clientForUpstream, .pauseClient)
        case .upstreamDrained:
            guard pauses.remove(.clientForUpstream) != nil else { return .none }
            return pauses.contains(.clientForQueue) ? .none : .resumeClient
        case .clientFull:
            return pause(.upstreamForClient, .pauseUpstream)
        case .clientDrained:
            guard pauses.remove(.upstreamForClient) != nil else { return .none }
            return pauses.contains(.upstreamForBreakpoint) ? .none : .resumeUpstream
        case .responseHeld:
            return pause(.upstreamForBreakpoint, .pauseUpstream)
        case .responseReleased:
            guard pauses.remove(.upstreamForBreakpoint) != nil else { return .none }
            return pauses.contains(.upstreamForClient) ? .none : .resumeUpstream
        case .closeAfterFlush:
            guard life == .relaying else { return .none }
            life = .lingering
            return .linger
        case .close:
            guard !isClosed else { return .none }
            life = .closed
            return .closeNow
        case .upgraded:
            guard life == .relaying else { return .impossible(.upgradeWhileNotRelaying) }
            life = .upgraded
            return .none
        }
    }

    private mutating func pause(_ reason: Pauses, _ action: Action) -> Action {
        guard !pauses.contains(reason) else { return .none }
        pauses.insert(reason)
        return action
    }

    private mutating func responseHead(status: Int, framing: HTTP1BodyFraming, awaited: AwaitedResponse) -> Action {
        guard response == .awaitingHead else { return .impossible(.responseHeadInsideAResponse) }
        guard awaited != .nothing else { return .refuseResponse(.unasked) }
        if status == 101 {
            guard awaited == .responseOrUpgrade else { return .refuseResponse(.unaskedUpgrade) }
            response = .switchingProtocols
            return .relayHead
        }
        if status < 200 { return .relayInterimHead }
        response = .body(framing)
        return .relayHead
    }

    private mutating func responseEnd(upstreamKeepsAlive: Bool, clientKeepsAlive: Bool) -> Action {
        let ended = response
        switch ended {
        case .awaitingHead:
            return .none  // the end of a 1xx
        case .switchingProtocols:
            response = .awaitingHead
            return .endResponse(then: .upgrade)
        case .body, .replaced:
            response = .awaitingHead
        }
        let next: AfterResponse
        if ended == .body(.closeDelimited) || !upstreamKeepsAlive {
            next = .closeBoth
        } else if !clientKeepsAlive {
            next = .closeClientKeepingUpstream
        } else {
            next = .nextExchange
        }
        return ended == .body(.chunked) ? .endChunkedResponse(then: next) : .endResponse(then: next)
    }

    // MARK: what the relay asks

    /// Requests and responses flow (not lingering, closed or upgraded).
    package var isRelaying: Bool { life == .relaying }
    /// Closed, or handed to a raw relay.
    package var isClosed: Bool { life == .closed || life == .upgraded }
    package var isLingering: Bool { life == .lingering }
    /// A request head was taken and its end was not.
    package var requestIsOpen: Bool { request != .awaitingHead }
    /// The head of the response at the head of the queue went to the client.
    package var responseHeadSent: Bool { response != .awaitingHead }
    /// The client closed its side and no request of it is open: it sends nothing more.
    package var clientIsDone: Bool { clientInput == .ended && request == .awaitingHead }
    package var clientHasEnded: Bool { clientInput == .ended }
    /// The upstream may carry another exchange as far as its input goes.
    package var upstreamInputIsOpen: Bool { upstreamInput == .open }
}
