import Foundation

/// The outcome of `mitm-proxy audit`: the host × profile matrix, a conclusion per host, critical findings and the
/// expectations. Also the `--report` JSON of an audit.
package struct AuditResult: Sendable, Equatable, Codable {
    /// One host's row.
    package struct Row: Sendable, Equatable, Codable {
        /// The host.
        package var host: String
        /// One cell per round, in round order.
        package var cells: [AuditCell]
        /// What the row proves.
        package var conclusion: AuditConclusion
    }

    /// `pass` (no invalid certificate accepted, every expectation holds) or `fail`.
    package var result: String
    /// When it was made.
    package var generatedAt: Date
    /// The profiles, in round order.
    package var profiles: [CertificateProfile]
    /// Every round in full.
    package var rounds: [AuditRound]
    /// The matrix, host by host.
    package var rows: [Row]
    /// One critical finding per accepted invalid certificate.
    package var findings: [Finding]
    /// The expectations and whether they held.
    package var expectations: [ExpectationResult]

    /// The audit of `rounds`, checked against `expectations` (`validates:`/`pinned:` against the conclusions,
    /// `refused:`/`intercepted:` against the `trusted` round).
    package init(
        rounds: [AuditRound], expectations: [Expectation], allowUnprovenRefusals: Bool = false,
        generatedAt: Date = Date()
    ) {
        self.generatedAt = generatedAt
        self.rounds = rounds
        profiles = rounds.map(\.profile)
        var names: [String] = []
        for name in rounds.flatMap(\.hostNames) where !names.contains(name) { names.append(name) }
        for expectation in expectations {
            let name = expectation.pattern.description
            if !name.contains("*"), !names.contains(name) { names.append(name) }
        }
        let passthroughFailed =
            rounds.first { $0.profile == .passthrough }?.clientCommand.map { !$0.succeeded } ?? false
        let trustedRound = rounds.first { $0.profile == .trusted }
        rows = names.sorted().map { host in
            let cells = rounds.map { $0.cell(for: host) }
            let refusers = trustedRound?.hosts.filter { $0.host == host }.flatMap(\.refusedBy) ?? []
            let unproven =
                allowUnprovenRefusals ? nil : refusers.first { !(trustedRound?.provenClients.contains($0) ?? false) }
            return Row(
                host: host, cells: cells,
                conclusion: AuditConclusion.of(
                    cells, passthroughCommandFailed: passthroughFailed, unprovenRefuser: unproven))
        }
        findings = rows.flatMap { row in
            row.cells.filter(\.isCritical).map { cell in
                Finding(
                    severity: "critical", host: row.host, profile: cell.profile.description,
                    message: VerdictText.acceptedInvalid(cell.profile))
            }
        }
        let trustedCheck = ExpectationCheck(
            expectations.filter { !$0.outcome.isAuditConclusion },
            provenClients: trustedRound?.provenClients ?? [], allowUnprovenRefusals: allowUnprovenRefusals)
        let trustedResults = trustedCheck.evaluate(trustedRound?.hosts ?? [])
        var remaining = trustedResults.makeIterator()
        let rows = rows
        self.expectations = expectations.map { expectation in
            guard expectation.outcome.isAuditConclusion else {
                return remaining.next()
                    ?? ExpectationResult(
                        expectation: expectation.description, met: false, hosts: [:],
                        explanation: "the audit ran no trusted round to check it against")
            }
            return Self.evaluate(expectation, rows)
        }
        result = findings.isEmpty && self.expectations.allSatisfy(\.met) ? "pass" : "fail"
    }

    private static func evaluate(_ expectation: Expectation, _ rows: [Row]) -> ExpectationResult {
        let matching = rows.filter {
            expectation.pattern.matches($0.host) && $0.cells.contains { $0.verdict != .unseen }
        }
        guard !matching.isEmpty else {
            return ExpectationResult(
                expectation: expectation.description, met: false, hosts: [:],
                explanation: "no connection to \(expectation.pattern) was seen in any round (unseen)")
        }
        let wanted: Set<AuditConclusion.Kind> =
            expectation.outcome == .pinned ? [.pinned] : [.validatesNotPinned, .pinned, .validates]
        let hosts = Dictionary(uniqueKeysWithValues: matching.map { ($0.host, $0.conclusion.kind.rawValue) })
        if let failing = matching.first(where: { !wanted.contains($0.conclusion.kind) }) {
            return ExpectationResult(
                expectation: expectation.description, met: false, hosts: hosts,
                explanation: "\(failing.host): \(failing.conclusion.explanation)")
        }
        return ExpectationResult(
            expectation: expectation.description, met: true, hosts: hosts,
            explanation: matching.map { "\($0.host): \($0.conclusion.kind.rawValue)" }.joined(separator: ", "))
    }

    /// The audit `encoded()` wrote, or nil when `data` is not an audit's report (a run's `--report` is read by
    /// `VerdictReport.decode`).
    package static func decodeIfAudit(_ data: Data) -> AuditResult? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(AuditResult.self, from: data)
    }

    /// Pretty, key-sorted JSON.
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }
}
