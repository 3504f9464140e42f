/// What a connection waits for when its deadline is set; the timeout's log line says it.
package enum TimeoutReason: Sendable, Equatable {
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
    package var waitingFor: String {
        switch self {
        case .proxyRequest: "reading the proxy request"
        case .firstTunnelBytes(let host, let port):
            "waiting for the client's first bytes in the tunnel to \(host):\(port)"
        case .upstream(let host, let port): "connecting to \(host):\(port)"
        case .clientHandshake(let host): "the client's TLS handshake for \(host)"
        case .idle: "waiting for traffic"
        case .lingering: "closing after the last response"
        }
    }
}

/// When a connection times out, and what it waits for meanwhile.
package struct ConnectionDeadline: Sendable, Equatable {
    /// Monotonic nanoseconds.
    package var at: UInt64
    package var reason: TimeoutReason

    package init(at: UInt64, reason: TimeoutReason) {
        self.at = at
        self.reason = reason
    }

    /// `reason`'s deadline `seconds` after `now` (monotonic nanoseconds).
    package static func after(_ seconds: Double, _ reason: TimeoutReason, now: UInt64) -> ConnectionDeadline {
        ConnectionDeadline(at: instant(seconds, after: now), reason: reason)
    }

    /// `reason`'s deadline `nanoseconds` after `now`.
    package static func after(nanoseconds: UInt64, _ reason: TimeoutReason, now: UInt64) -> ConnectionDeadline {
        ConnectionDeadline(at: instant(nanoseconds: nanoseconds, after: now), reason: reason)
    }

    /// `start` plus `seconds`, saturating: a negative or NaN duration is `start`, one beyond the clock's range is never.
    package static func instant(_ seconds: Double, after start: UInt64) -> UInt64 {
        guard seconds > 0 else { return start }
        let nanoseconds = seconds * 1_000_000_000
        guard nanoseconds < Double(UInt64.max - start) else { return UInt64.max }
        return start + UInt64(nanoseconds)
    }

    /// `start` plus `duration`, saturating: a negative duration is `start`, one beyond the clock's range is never.
    package static func instant(_ duration: Duration, after start: UInt64) -> UInt64 {
        instant(nanoseconds: nanoseconds(duration), after: start)
    }

    /// `start` plus `nanoseconds`, saturating at never.
    package static func instant(nanoseconds: UInt64, after start: UInt64) -> UInt64 {
        let (sum, overflow) = start.addingReportingOverflow(nanoseconds)
        return overflow ? UInt64.max : sum
    }

    /// `duration` in the clock's nanoseconds, saturating: a negative duration is 0, one beyond the clock's range
    /// `UInt64.max`.
    package static func nanoseconds(_ duration: Duration) -> UInt64 {
        guard duration > .zero else { return 0 }
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max : instant(nanoseconds: UInt64(attoseconds / 1_000_000_000), after: whole)
    }
}
