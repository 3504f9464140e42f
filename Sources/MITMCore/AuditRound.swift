/// What one round of `mitm-proxy audit` saw: the client command run once with every host shown one profile.
package struct AuditRound: Sendable, Equatable, Codable {
    /// The profile of the round.
    package var profile: CertificateProfile
    /// Per-host verdicts of the round (none in the `passthrough` round, which intercepts nothing).
    package var hosts: [HostVerdict]
    /// Hosts whose tunnels were relayed untouched and carried bytes both ways (the `passthrough` round).
    package var passedThrough: [String]
    /// Clients that accepted the proxy's CA in this round.
    package var provenClients: [String]
    /// How the client command ended.
    package var clientCommand: ClientCommandOutcome?

    /// A round's record.
    package init(
        profile: CertificateProfile, hosts: [HostVerdict], passedThrough: [String] = [], provenClients: [String] = [],
        clientCommand: ClientCommandOutcome? = nil
    ) {
        self.profile = profile
        self.hosts = hosts
        self.passedThrough = passedThrough
        self.provenClients = provenClients
        self.clientCommand = clientCommand
    }

    /// The cell of `host` in this round.
    package func cell(for host: String) -> AuditCell {
        if profile == .passthrough {
            return AuditCell(
                profile: profile, verdict: passedThrough.contains(host) ? .passedThrough : .unseen, how: [],
                connections: 0)
        }
        let matching = hosts.filter { $0.host == host }
        guard !matching.isEmpty else { return AuditCell(profile: profile, verdict: .unseen, how: [], connections: 0) }
        let kinds = matching.map(\.verdict)
        let verdict: AuditCell.Verdict =
            kinds.contains(.intercepted)
            ? .accepted
            : kinds.allSatisfy { $0 == .refused } ? .refused : .inconclusive
        var how: [String] = []
        for way in matching.flatMap(\.how) where !how.contains(way) { how.append(way) }
        return AuditCell(
            profile: profile, verdict: verdict, how: how, connections: matching.map(\.attempts).reduce(0, +))
    }

    /// Every host the round saw.
    package var hostNames: [String] { hosts.map(\.host) + passedThrough }
}

/// One host under one profile in the audit matrix.
package struct AuditCell: Sendable, Equatable, Codable {
    /// What the client did with the certificate.
    package enum Verdict: String, Sendable, Codable {
        /// It completed the handshake and sent its request.
        case accepted
        /// It refused every connection.
        case refused
        /// Idle, failed negotiation, or a mix without acceptance: proves nothing.
        case inconclusive
        /// The client did not contact the host in this round.
        case unseen
        /// The tunnel was relayed untouched and carried data both ways (the `passthrough` round).
        case passedThrough = "passed-through"
    }

    /// The round's profile.
    package var profile: CertificateProfile
    /// The verdict.
    package var verdict: Verdict
    /// How the client refused or failed (`alert unknown_ca`, `closed-after-handshake`).
    package var how: [String]
    /// Connections decided in the round.
    package var connections: Int

    /// Creates a cell.
    package init(profile: CertificateProfile, verdict: Verdict, how: [String], connections: Int) {
        self.profile = profile
        self.verdict = verdict
        self.how = how
        self.connections = connections
    }

    /// The client accepted a certificate it must refuse.
    package var isCritical: Bool { profile.isInvalid && verdict == .accepted }

    /// The matrix text: `ACCEPTED!` for an accepted invalid certificate, else the verdict.
    package var text: String { isCritical ? "ACCEPTED!" : verdict.rawValue }
}
