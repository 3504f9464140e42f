import Foundation

/// The verdict of one intercepted TLS connection, with what the proxy saw.
public struct ConnectionVerdict: Sendable, Equatable, Codable {
    /// The proxy's connection id.
    public var connectionID: Int
    /// The host the client asked for (SNI, or the CONNECT host without SNI).
    public var host: String
    /// The CONNECT port.
    public var port: Int
    /// The verdict.
    public var verdict: Verdict
    /// The negotiated TLS version, when the handshake got that far.
    public var tlsVersion: String?
    /// The negotiated ALPN protocol, if any.
    public var alpn: String?
    /// The ALPN protocols the client offered.
    public var offeredALPN: [String]
    /// base64 SHA-256 of the SubjectPublicKeyInfo of the certificate the client was shown.
    public var shownCertificatePin: String
    /// When the client's ClientHello arrived.
    public var startedAt: Date
    /// Milliseconds from ClientHello to handshake completion, when it completed.
    public var handshakeMilliseconds: Double?
    /// When the verdict was decided.
    public var decidedAt: Date
    /// The client's IP address (no port), when known: proof that the CA works is per client.
    public var client: String?
    /// The certificate profile the client was shown; nil for `trusted`.
    public var profile: CertificateProfile?
    /// Who the client is beyond its address (fingerprint, process); nil in records of earlier versions.
    public var identity: ClientIdentity?

    /// Creates a record.
    public init(
        connectionID: Int, host: String, port: Int, verdict: Verdict, tlsVersion: String?, alpn: String?,
        offeredALPN: [String], shownCertificatePin: String, startedAt: Date, handshakeMilliseconds: Double?,
        decidedAt: Date, client: String? = nil, profile: CertificateProfile? = nil
    ) {
        self.connectionID = connectionID
        self.host = host
        self.port = port
        self.verdict = verdict
        self.tlsVersion = tlsVersion
        self.alpn = alpn
        self.offeredALPN = offeredALPN
        self.shownCertificatePin = shownCertificatePin
        self.startedAt = startedAt
        self.handshakeMilliseconds = handshakeMilliseconds
        self.decidedAt = decidedAt
        self.client = client
        self.profile = profile
    }

    /// Whether the client accepted a certificate it should have refused: the worst finding.
    public var acceptedInvalidCertificate: Bool { verdict.kind == .intercepted && profile?.isInvalid == true }

    /// The client as a key for per-client proof: its identity's key, or its address in records without one
    /// (`unknown` when the proxy could not read it).
    public var clientKey: String { identity?.key ?? client ?? "unknown" }

    /// The client for a person: `curl (pid 812)`, or the address.
    public var clientLabel: String { identity?.label ?? clientKey }
}
