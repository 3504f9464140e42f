/// What a client did with the forged certificate on one intercepted TLS connection.
public enum VerdictKind: String, Sendable, Codable, CaseIterable {
    /// The client completed the handshake and sent application data: it accepted the certificate.
    case intercepted
    /// The client rejected the certificate (alert, or hung up before sending any request).
    case refused
    /// Handshake done, nothing sent, still open when the silence window ended or the proxy stopped.
    case inconclusive
    /// The handshake broke for a reason that is not the certificate: never evidence of pinning.
    case failed
    /// Closed without a request while the same client used another intercepted connection, open at the same time, to
    /// the same host and port (a browser's spare or duplicate connection): never a refusal.
    case unused
}

/// How the verdict was reached.
public enum VerdictReason: String, Sendable, Codable {
    /// Application data (an HTTP/1 request, an HTTP/2 preface) after the handshake.
    case applicationData = "application-data"
    /// A fatal TLS alert about the certificate, before any application data.
    case alert
    /// FIN or RST during the handshake, after the certificate was sent, without an alert.
    case closedInHandshake = "closed-in-handshake"
    /// close_notify, FIN or RST after the handshake, with no application data.
    case closedAfterHandshake = "closed-after-handshake"
    /// Handshake complete, no data, still open at the end of the window (or when the proxy stopped).
    case idle
    /// The handshake failed for a non-certificate reason (protocol or cipher mismatch, garbage, early close).
    case negotiation
    /// Closed after the handshake without a request while a sibling connection of the same client was intercepted.
    case unusedDuplicate = "unused-duplicate"
    /// Closed during the handshake while a sibling connection of the same client, open at the same time, was
    /// intercepted: a spare the client gave up on (a browser's pre-connect), neither acceptance nor refusal.
    case abandonedInHandshake = "abandoned-in-handshake"
}

/// A per-connection verdict with its evidence.
public struct Verdict: Sendable, Equatable, Codable {
    /// The verdict.
    public var kind: VerdictKind
    /// How it was reached.
    public var reason: VerdictReason
    /// The alert the client sent, when one decided (or accompanied) the verdict.
    public var alert: String?
    /// A short technical detail (OpenSSL's reason for negotiation failures; `resumedSessionDetail`).
    public var detail: String?
    /// True when the connection resumed an earlier TLS session: it was shown no certificate, the client accepted one in
    /// the earlier full handshake for the same host and certificate (sessions are bound to both). Nil otherwise.
    public var resumed: Bool?

    /// The detail of a resumed connection's verdict.
    public static let resumedSessionDetail =
        "resumed a TLS session (the certificate was accepted in an earlier full handshake for this host)"

    /// Creates a verdict.
    public init(kind: VerdictKind, reason: VerdictReason, alert: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.reason = reason
        self.alert = alert
        self.detail = detail
    }

    /// How it was reached in a few words, the same everywhere: `alert unknown_ca`, `closed-after-handshake`.
    public var how: String { way.description }

    /// How it was reached, as per-host counts count it.
    public var way: VerdictWay { VerdictWay(self) }
}
