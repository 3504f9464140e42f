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

    /// Creates a record.
    public init(connectionID: Int, host: String, port: Int, verdict: Verdict, tlsVersion: String?, alpn: String?,
                offeredALPN: [String], shownCertificatePin: String, startedAt: Date, handshakeMilliseconds: Double?,
                decidedAt: Date) {
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
    }
}

/// The per-host verdict.
public enum HostVerdictKind: String, Sendable, Codable {
    /// At least one connection was intercepted: the host is not pinned (in this client).
    case intercepted
    /// Every connection was refused: pinning (or a missing CA) held.
    case refused
    /// Attempts that prove nothing (idle, failed negotiation, or a mix without interception).
    case inconclusive
    /// An expected host the client never contacted.
    case unseen
}

/// The aggregate of every connection to one host.
public struct HostVerdict: Sendable, Equatable, Codable {
    /// The host.
    public var host: String
    /// The aggregate verdict.
    public var verdict: HostVerdictKind
    /// Connections seen.
    public var attempts: Int
    /// Connections per verdict (`intercepted`, `refused`, ...).
    public var counts: [String: Int]
    /// Distinct ways the client refused or failed, e.g. `alert unknown_ca`, `closed-after-handshake`.
    public var how: [String]

    /// Creates a summary.
    public init(host: String, verdict: HostVerdictKind, attempts: Int, counts: [String: Int], how: [String]) {
        self.host = host
        self.verdict = verdict
        self.attempts = attempts
        self.counts = counts
        self.how = how
    }

    /// Aggregates connection verdicts per host, sorted by host (DESIGN.md: intercepted if any attempt
    /// was, refused if all were, inconclusive otherwise).
    public static func aggregate(_ connections: [ConnectionVerdict]) -> [HostVerdict] {
        let byHost = Dictionary(grouping: connections, by: \.host)
        return byHost.keys.sorted().map { host in
            let verdicts = byHost[host, default: []].map(\.verdict)
            var counts: [String: Int] = [:]
            var how: [String] = []
            for verdict in verdicts {
                counts[verdict.kind.rawValue, default: 0] += 1
                guard verdict.kind != .intercepted else { continue }
                let text = verdict.alert.map { "\(verdict.reason.rawValue) \($0)" } ?? verdict.reason.rawValue
                if !how.contains(text) { how.append(text) }
            }
            let kind: HostVerdictKind
            if verdicts.contains(where: { $0.kind == .intercepted }) {
                kind = .intercepted
            } else if !verdicts.isEmpty && verdicts.allSatisfy({ $0.kind == .refused }) {
                kind = .refused
            } else {
                kind = .inconclusive
            }
            return HostVerdict(host: host, verdict: kind, attempts: verdicts.count, counts: counts, how: how)
        }
    }
}
