extension ConnectionLife {
    /// How far a tunnel's own upstream is, while the connection waits for it.
    package enum UpstreamProgress {
        /// Not asked for (the trust probe, an upstream a rule answers for), or handed on (to the pool, to a relay, to
        /// the upstream's TLS handshake).
        case none
        /// An idle pooled connection to the same origin, used if the client asks the same way.
        case pooled(Parts.PooledUpstream)
        /// Not dialled yet: the loop has an HTTP/2 connection to the origin, which the client may share once its
        /// ClientHello shows that it asks the same way.
        case deferred
        /// Being reached (the attempt has its own timer, which answers the client).
        case connecting(Parts.UpstreamAttempt)
        /// Connected, and not taken yet.
        case connected(Parts.UpstreamConnection)
        /// Could not be reached.
        case failed(Parts.UpstreamFailure)
    }
}

extension ConnectionLife.UpstreamProgress: Equatable where Parts: EquatableConnectionParts {}
