import MITMCore

/// What a connection waits for when its deadline is set; the timeout's log line says it.
enum TimeoutReason: Equatable {
    /// The proxy request (CONNECT or absolute-form) from a new client.
    case proxyRequest
    /// The tunnel's first bytes (a ClientHello, or anything for a raw tunnel).
    case firstTunnelBytes(host: String, port: Int)
    /// The upstream's TCP connect and TLS handshake.
    case upstream(host: String, port: Int)
    /// The client's TLS handshake with the forged certificate.
    case clientHandshake(host: String)
    /// Any byte in either direction (or a request head's end, while one is arriving).
    case idle
    /// The client hanging up after the proxy's last byte.
    case lingering

    /// The log's words for what did not happen in time.
    var waitingFor: String {
        switch self {
        case .proxyRequest: "reading the proxy request"
        case .firstTunnelBytes(let host, let port): "waiting for the client's first bytes in the tunnel to \(host):\(port)"
        case .upstream(let host, let port): "connecting to \(host):\(port)"
        case .clientHandshake(let host): "the client's TLS handshake for \(host)"
        case .idle: "waiting for traffic"
        case .lingering: "closing after the last response"
        }
    }
}

/// When a connection times out, and what it waits for meanwhile.
struct ConnectionDeadline: Equatable {
    /// Monotonic nanoseconds.
    var at: UInt64
    var reason: TimeoutReason

    /// `reason`'s deadline `seconds` after `clock`'s now.
    static func after(_ seconds: Double, _ reason: TimeoutReason, on clock: ProxyClock) -> ConnectionDeadline {
        ConnectionDeadline(at: clock.after(seconds: seconds), reason: reason)
    }
}
