/// The life of an HTTP/2 relay's client connection: serving streams (with or without an upstream for new ones),
/// finishing (goodbyes said, waiting for the client to hang up), closed. Events in, actions out; `HTTP2Relay` performs
/// them on its sessions and legs. Its streams have machines of their own (`HTTP2StreamMachine`).
struct HTTP2RelayLife: Equatable {
    /// Whether new streams may go upstream.
    enum Upstream: Equatable {
        case available
        /// New streams fail with a 502: the upstream could not be reached, or went away and the client was told.
        case unavailable
        /// The upstream went away (its GOAWAY, close or protocol error): the client gets a GOAWAY once the frames
        /// queued for it are out, since strict clients stop reading at a GOAWAY and the answers to streams in flight
        /// go first.
        case goneGoAwayOwed
    }

    enum State: Equatable {
        case serving(Upstream)
        /// Streams failed, upstream left, GOAWAY, close_notify and FIN sent: the client has until the connection's
        /// linger deadline to hang up. `reason` is what the close will say.
        case finishing(reason: String)
        case closed
    }

    enum Event: Equatable {
        case upstreamWentAway
        /// The client session has no frames left to write: a GOAWAY owed can go.
        case clientOutputFlushed
        /// End the connection gracefully; `clientGone`: the client's input already ended (FIN, close_notify, reset).
        case finish(reason: String, clientGone: Bool)
        /// The client's input ended (or failed).
        case clientHungUp
        /// End the connection now.
        case close(reason: String)
    }

    enum Action: Equatable {
        /// GOAWAY to the client, if its session still reads.
        case goAwayToClient
        /// Fail the streams still open and leave the upstream; GOAWAY (when `goAway` and the client still reads) and
        /// whatever frames are queued go out, then the client's side is finished (close_notify, FIN).
        case sayGoodbye(reason: String, goAway: Bool)
        /// Read on until the client hangs up, and tell the connection the relay lingers.
        case awaitHangUp
        /// Close the client leg and report `reason` to the connection; `goodbyeFirst`: with a best-effort GOAWAY,
        /// failed streams and the upstream left first (nothing was said yet).
        case close(reason: String, goodbyeFirst: Bool)
    }

    private(set) var state: State

    /// A relay whose new streams go upstream when `upstreamAvailable`, or fail with a 502.
    init(upstreamAvailable: Bool) {
        state = .serving(upstreamAvailable ? .available : .unavailable)
    }

    var isServing: Bool {
        if case .serving = state { true } else { false }
    }

    var isClosed: Bool { state == .closed }

    /// Whether a new stream may go upstream now.
    var upstreamAvailable: Bool { state == .serving(.available) }

    mutating func receive(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.closed, _):
            return []
        case (.serving, .upstreamWentAway):
            state = .serving(.goneGoAwayOwed)
            return []
        case (.serving(.goneGoAwayOwed), .clientOutputFlushed):
            state = .serving(.unavailable)
            return [.goAwayToClient]
        case (.serving, .finish(let reason, let clientGone)):
            if clientGone {
                state = .closed
                return [.sayGoodbye(reason: reason, goAway: false), .close(reason: reason, goodbyeFirst: false)]
            }
            state = .finishing(reason: reason)
            return [.sayGoodbye(reason: reason, goAway: true), .awaitHangUp]
        case (.finishing(let reason), .clientHungUp):
            state = .closed
            return [.close(reason: reason, goodbyeFirst: false)]
        case (.serving, .close(let reason)):
            state = .closed
            return [.close(reason: reason, goodbyeFirst: true)]
        case (.finishing, .close(let reason)):
            state = .closed
            return [.close(reason: reason, goodbyeFirst: false)]
        case (.serving, .clientOutputFlushed), (.serving, .clientHungUp), (.finishing, .upstreamWentAway),
            (.finishing, .clientOutputFlushed), (.finishing, .finish):
            // Nothing owed, or the goodbyes are said already.
            return []
        }
    }
}
