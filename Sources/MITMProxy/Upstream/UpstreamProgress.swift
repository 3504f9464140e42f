/// How far a tunnel's upstream connection is.
enum UpstreamProgress {
    /// Not asked for (the trust probe), or handed on (to the pool, or taken over by a reused one).
    case none
    /// An idle pooled connection to the same origin, used if the client asks the same way.
    case pooled(PooledUpstream)
    /// Not dialled yet: the loop has an HTTP/2 connection to the origin, which the client may share once its
    /// ClientHello shows that it asks the same way.
    case deferred
    /// Being reached.
    case connecting(any UpstreamAttempt)
    /// Connected (the socket is the upstream leg's, once TLS starts on it).
    case connected(UpstreamConnection)
    /// Could not be reached.
    case failed(UpstreamFailure)

    init(_ result: Result<UpstreamConnection, UpstreamFailure>) {
        switch result {
        case .success(let connection): self = .connected(connection)
        case .failure(let failure): self = .failed(failure)
        }
    }

    /// The connect's outcome, once there is one.
    var outcome: Result<UpstreamConnection, UpstreamFailure>? {
        switch self {
        case .connected(let connection): .success(connection)
        case .failed(let failure): .failure(failure)
        case .none, .pooled, .deferred, .connecting: nil
        }
    }
}
