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

/// What happened to the requests of an intercepted host on the upstream side.
public struct UpstreamOutcome: Sendable, Equatable, Codable {
    /// Requests the client sent on intercepted connections to this host and port.
    public var requests: Int
    /// Of those, how many the proxy answered itself with a 502 because the upstream failed.
    public var answeredWith502: Int
    /// The last upstream failure, in words.
    public var lastFailure: String?

    /// Creates an outcome.
    public init(requests: Int = 0, answeredWith502: Int = 0, lastFailure: String? = nil) {
        self.requests = requests
        self.answeredWith502 = answeredWith502
        self.lastFailure = lastFailure
    }
}

/// The aggregate of every connection to one host and port.
public struct HostVerdict: Sendable, Equatable, Codable {
    /// The host.
    public var host: String
    /// The CONNECT port (nil for an `unseen` host).
    public var port: Int?
    /// The aggregate verdict.
    public var verdict: HostVerdictKind
    /// Connections seen.
    public var attempts: Int
    /// Connections per verdict kind (`counts[.refused]`), and per kind and way.
    public var counts: VerdictCounts
    /// Distinct ways the client refused or failed, in words, e.g. `alert unknown_ca`, `closed-after-handshake`.
    public var how: [String]
    /// Clients (identity keys) that refused the certificate for this host (each needs its own proof that the CA works).
    public var refusedBy: [String]
    /// Upstream failures behind intercepted connections, when there were any.
    public var upstream: UpstreamOutcome?
    /// Clients (identity keys) that connected to this host and port.
    public var clients: [String]
    /// The evidence behind the verdict in one line: clients, connections, proof of trust, the expectation's source.
    public var evidence: String?
    /// Times a client that refused this host reached it another way (plain `http://`, an untouched tunnel).
    public var fallbacks: [Fallback]
    /// Pin-failure reports the app posted about this host (`noted-hostname`).
    public var pinFailureReports: [PinFailureReport]
    /// The certificate profile the host's clients were shown; nil for `trusted`.
    public var profile: CertificateProfile?
    /// The connections per client (by identity and process), in the order the clients were first seen.
    public var byClient: [HostClientTally]

    /// Creates a summary.
    public init(
        host: String, port: Int? = nil, verdict: HostVerdictKind, attempts: Int, counts: VerdictCounts, how: [String],
        refusedBy: [String] = [], clients: [String] = [], upstream: UpstreamOutcome? = nil,
        profile: CertificateProfile? = nil, byClient: [HostClientTally] = []
    ) {
        self.byClient = byClient
        self.host = host
        self.port = port
        self.verdict = verdict
        self.attempts = attempts
        self.counts = counts
        self.how = how
        self.refusedBy = refusedBy
        self.clients = clients
        self.upstream = upstream
        fallbacks = []
        pinFailureReports = []
        self.profile = profile
    }

    /// Whether a client accepted a certificate it should have refused here: the worst finding.
    public var acceptedInvalidCertificate: Bool { verdict == .intercepted && profile?.isInvalid == true }

    private enum CodingKeys: String, CodingKey {
        case host, port, verdict, attempts, counts, how, ways, refusedBy, upstream, clients, evidence, fallbacks,
            pinFailureReports, profile
        case byClient, disagreement
    }

    /// Writes the finding lists only when they hold something.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host, forKey: .host)
        try container.encodeIfPresent(port, forKey: .port)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(counts.kindTable, forKey: .counts)
        try container.encode(how, forKey: .how)
        try container.encode(counts.wayTable, forKey: .ways)
        try container.encode(refusedBy, forKey: .refusedBy)
        try container.encodeIfPresent(upstream, forKey: .upstream)
        try container.encode(clients, forKey: .clients)
        try container.encodeIfPresent(evidence, forKey: .evidence)
        if !fallbacks.isEmpty { try container.encode(fallbacks, forKey: .fallbacks) }
        if !pinFailureReports.isEmpty { try container.encode(pinFailureReports, forKey: .pinFailureReports) }
        try container.encodeIfPresent(profile, forKey: .profile)
        if !byClient.isEmpty { try container.encode(byClient, forKey: .byClient) }
        try container.encodeIfPresent(disagreement, forKey: .disagreement)
    }

    /// Reads reports of earlier versions too (without `ways`, `refusedBy`, `port`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decode(String.self, forKey: .host)
        port = try container.decodeIfPresent(Int.self, forKey: .port)
        verdict = try container.decode(HostVerdictKind.self, forKey: .verdict)
        attempts = try container.decode(Int.self, forKey: .attempts)
        do {
            counts = try VerdictCounts(
                kindTable: container.decode([String: Int].self, forKey: .counts),
                wayTable: container.decodeIfPresent([String: [String: Int]].self, forKey: .ways) ?? [:])
        } catch let error as VerdictCountsError {
            throw DecodingError.dataCorruptedError(forKey: .counts, in: container, debugDescription: error.description)
        }
        how = try container.decodeIfPresent([String].self, forKey: .how) ?? []
        refusedBy = try container.decodeIfPresent([String].self, forKey: .refusedBy) ?? []
        upstream = try container.decodeIfPresent(UpstreamOutcome.self, forKey: .upstream)
        clients = try container.decodeIfPresent([String].self, forKey: .clients) ?? []
        evidence = try container.decodeIfPresent(String.self, forKey: .evidence)
        fallbacks = try container.decodeIfPresent([Fallback].self, forKey: .fallbacks) ?? []
        pinFailureReports = try container.decodeIfPresent([PinFailureReport].self, forKey: .pinFailureReports) ?? []
        profile = try container.decodeIfPresent(CertificateProfile.self, forKey: .profile)
        byClient = try container.decodeIfPresent([HostClientTally].self, forKey: .byClient) ?? []
    }

    /// Aggregates connection verdicts per host and port, sorted by host then port (DESIGN.md: intercepted if
    /// any attempt was, refused if all were, inconclusive otherwise).
    public static func aggregate(_ connections: [ConnectionVerdict]) -> [HostVerdict] {
        var ledger = VerdictLedger(detailLimit: 0)
        for connection in connections { ledger.record(connection, replacing: nil) }
        return ledger.hostVerdicts
    }

    /// The aggregate kind for per-kind counts.
    static func kind(counts: VerdictCounts) -> HostVerdictKind {
        let total = counts.total
        if counts[.intercepted] > 0 { return .intercepted }
        if total > 0 && counts[.refused] == total { return .refused }
        return .inconclusive
    }
}
