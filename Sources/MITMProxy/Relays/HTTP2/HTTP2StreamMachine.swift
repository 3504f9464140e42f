import Foundation

/// The life of one client stream of the HTTP/2 relay: where its request goes, how far the request and the response
/// are, and whether the relay gave up on it. Events in, actions out; the relay performs the actions on its two
/// sessions and keeps the stream's record. An event the states cannot take is named (`.impossible`): the relay ends
/// that stream with RST_STREAM and says which event it was. Kept in the engine: it runs for every frame.
struct HTTP2StreamMachine: Equatable {
    /// The client's request: its head arrived when the stream was made.
    enum Request: Equatable {
        /// Body bytes may follow.
        case flowing
        /// END_STREAM (or trailers) came at this instant, for HAR's send phase.
        case ended(at: Date)
    }

    /// Where the request goes.
    enum Route: Equatable {
        /// Just arrived: the rules and the upstream's availability are not consulted yet.
        case deciding
        /// A rule's delay or a breakpoint holds it (the rules keep what arrives meanwhile).
        case held
        /// Relayed to this upstream stream.
        case upstream(Int32)
        /// Went upstream, and that stream is over or was abandoned: nothing more goes there.
        case detached
        /// Never goes upstream: the proxy answered or refused it.
        case nowhere
    }

    /// Who made the response the client gets.
    enum Source: Equatable {
        case upstream
        /// The proxy itself (a 502, a 431, a rule's answer, a breakpoint's answer).
        case proxy
    }

    /// The response toward the client.
    enum Response: Equatable {
        /// No final head went to the client yet (1xx heads may have).
        case awaited
        /// The final head went at `headAt` (for HAR's wait phase); body bytes follow.
        case streaming(from: Source, headAt: Date)
        /// The response's last byte (or its trailers) went to the client's queue.
        case ended(from: Source, headAt: Date)
        /// The client's stream was reset: nothing more goes to the client (heads and bytes are dropped).
        case reset(headAt: Date?)
    }

    enum Event: Equatable {
        /// Request body bytes arrived from the client.
        case requestBody
        /// The client's request ended (END_STREAM or trailers) at `at`.
        case requestEnded(at: Date)
        /// A rule's delay or a breakpoint holds the request.
        case held
        /// The request went upstream on this stream.
        case upstreamOpened(Int32)
        /// The upstream stream is over, or the relay reset it.
        case upstreamDetached
        /// The proxy answered the stream itself at `at`; `ends`: with nothing left to send.
        case answeredLocally(at: Date, ends: Bool)
        /// The upstream's final head went to the client at `at`; `ends`: it ended the response.
        case responseHead(at: Date, ends: Bool)
        /// Response body bytes are to go to the client.
        case responseBody
        /// The response ended (END_STREAM or trailers) toward the client.
        case responseEnded
        /// The client's stream was reset (by the relay or the client).
        case clientReset
    }

    /// An event the stream's states cannot take: the sessions or the relay broke an ordering they guarantee.
    enum ImpossibleEvent: String, Equatable {
        case requestBodyAfterItsEnd = "request body bytes arrived after the request ended"
        case requestEndedTwice = "the request ended a second time"
        case heldWhileRouted = "a rule held a request that was already routed"
        case openedWhileRouted = "an upstream stream opened for a request that was already routed"
        case detachedWithoutUpstream = "an upstream stream was detached from a request that had none"
        case answeredAfterResponseBegan = "the proxy answered a stream whose response had begun"
        case secondResponseHead = "a second final response head came for the stream"
        case responseBodyWithoutHead = "response body bytes came before the response head"
        case responseBodyAfterItsEnd = "response body bytes came after the response ended"
        case responseBodyForLocalAnswer = "upstream body bytes came for a stream the proxy answered itself"
        case responseEndedWithoutHead = "the response ended before its head"
        case responseEndedTwice = "the response ended a second time"
    }

    enum Action: Equatable {
        case none
        /// Send the request body bytes (or the request's end) on this upstream stream.
        case sendUpstream(Int32)
        /// Give the bytes (or the end) to the rules holding the request.
        case hold
        /// Nobody reads them: take them off the sender's window.
        case discard
        /// Send the response bytes (or the response's end) to the client.
        case sendToClient
        case impossible(ImpossibleEvent)
    }

    private(set) var request: Request
    private(set) var route = Route.deciding
    private(set) var response = Response.awaited

    /// A stream whose request head arrived; `endedAt`: the head carried END_STREAM at that instant.
    init(requestEndedAt endedAt: Date? = nil) {
        request = endedAt.map { .ended(at: $0) } ?? .flowing
    }

    /// Takes `event`; returns what to do.
    mutating func receive(_ event: Event) -> Action {
        switch event {
        case .requestBody:
            guard case .flowing = request else { return .impossible(.requestBodyAfterItsEnd) }
            return requestAction
        case .requestEnded(let at):
            guard case .flowing = request else { return .impossible(.requestEndedTwice) }
            request = .ended(at: at)
            return requestAction
        case .held:
            guard case .deciding = route else { return .impossible(.heldWhileRouted) }
            route = .held
            return .none
        case .upstreamOpened(let upstreamID):
            switch route {
            case .deciding, .held: route = .upstream(upstreamID)
            case .upstream, .detached, .nowhere: return .impossible(.openedWhileRouted)
            }
            return .none
        case .upstreamDetached:
            guard case .upstream = route else { return .impossible(.detachedWithoutUpstream) }
            route = .detached
            return .none
        case .answeredLocally(let at, let ends):
            if case .reset = response { return .discard }
            guard case .awaited = response else { return .impossible(.answeredAfterResponseBegan) }
            switch route {
            case .deciding, .held: route = .nowhere
            case .upstream, .detached, .nowhere: break
            }
            response = ends ? .ended(from: .proxy, headAt: at) : .streaming(from: .proxy, headAt: at)
            return .sendToClient
        case .responseHead(let at, let ends):
            if case .reset = response { return .discard }
            guard case .awaited = response else { return .impossible(.secondResponseHead) }
            response = ends ? .ended(from: .upstream, headAt: at) : .streaming(from: .upstream, headAt: at)
            return .sendToClient
        case .responseBody:
            return responseBodyAction
        case .responseEnded:
            switch response {
            case .streaming(let source, let headAt):
                response = .ended(from: source, headAt: headAt)
                return .sendToClient
            case .reset: return .discard
            case .awaited: return .impossible(.responseEndedWithoutHead)
            case .ended: return .impossible(.responseEndedTwice)
            }
        case .clientReset:
            response = .reset(headAt: headAt)
            return .none
        }
    }

    /// What becomes of the request's bytes (or its end) on the current route.
    private var requestAction: Action {
        switch route {
        case .upstream(let upstreamID): .sendUpstream(upstreamID)
        case .held: .hold
        case .deciding, .detached, .nowhere: .discard
        }
    }

    private var responseBodyAction: Action {
        switch response {
        case .streaming(.upstream, _): .sendToClient
        // The upstream's bytes for a rule's file answer are not relayed: the proxy sends the file.
        case .streaming(.proxy, _): .impossible(.responseBodyForLocalAnswer)
        case .reset: .discard
        case .awaited: .impossible(.responseBodyWithoutHead)
        case .ended: .impossible(.responseBodyAfterItsEnd)
        }
    }

    /// The upstream stream the request goes to, while there is one.
    var upstreamID: Int32? {
        if case .upstream(let upstreamID) = route { return upstreamID }
        return nil
    }

    /// When the request ended, once it did.
    var requestEndedAt: Date? {
        if case .ended(let at) = request { return at }
        return nil
    }

    /// When the response's final head went to the client, once it did.
    var headAt: Date? {
        switch response {
        case .awaited: nil
        case .streaming(_, let at), .ended(_, let at): at
        case .reset(let at): at
        }
    }

    /// A final response head went to the client (the stream may since have been reset).
    var responseStarted: Bool { headAt != nil }

    /// The response's end went to the client's queue.
    var responseEnded: Bool {
        if case .ended = response { return true }
        return false
    }
}
