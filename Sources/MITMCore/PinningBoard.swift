import Foundation

/// The web UI's board as JSON: host by host, the verdict and how it was reached, the expectation that decides
/// for the host and whether it holds, the certificate profile, and whether each client proved it trusts the CA.
/// Built from the same report `--report` writes, so the page and the file never disagree.
package struct PinningBoard: Encodable, Sendable {
    /// A client that connected to a host, and whether it accepted the proxy's CA somewhere in the run.
    package struct Client: Encodable, Sendable, Equatable {
        package var address: String
        /// The client for a person: `curl (pid 812)`, or the address and TLS fingerprint of a remote client.
        package var name: String
        package var trustsCA: Bool
    }

    /// One host and port (or an expected host nobody contacted).
    package struct Row: Encodable, Sendable {
        package var host: String
        package var port: Int?
        /// `intercepted`, `refused`, `inconclusive` or `unseen`.
        package var verdict: String
        package var attempts: Int
        /// Per-kind counts with their ways: `2 refused (closed-after-handshake 2)`.
        package var connections: String
        /// The distinct ways the client refused or failed.
        package var how: [String]
        /// The expectation that decides for the host (`refused:api.example.com`), if any.
        package var expectation: String?
        /// Whether it holds.
        package var holds: Bool?
        /// Why it holds or not.
        package var explanation: String?
        /// The certificate profile shown; nil for `trusted`.
        package var profile: String?
        package var acceptedInvalidCertificate: Bool
        package var clients: [Client]
        /// Lines under the row: upstream failures, the profile's meaning, fallbacks, pin-failure reports.
        package var notes: [String]
        package var evidence: String?
        /// `clients disagree: ...` when one client was intercepted here and another only refused.
        package var disagreement: String?
    }

    /// `pass`, `fail` or `no-expectations`, as in the report.
    package var result: String
    package var generatedAt: String
    package var listen: String
    package var rows: [Row]
    /// Every expectation with its outcome.
    package var expectations: [ExpectationResult]
    /// Clients that accepted the proxy's CA at least once.
    package var provenClients: [String]
    /// Events the recording queue dropped because its outputs stopped taking them (the board's counts stay complete).
    package var droppedEvents: Int

    /// The board of `report`, whose expectations were `expectations`.
    package init(_ report: VerdictReport, expectations: [Expectation], droppedEvents: Int = 0) {
        let check = ExpectationCheck(
            expectations, provenClients: report.provenClients, allowUnprovenRefusals: report.allowUnprovenRefusals,
            trustPerAddress: report.trustPerAddress, clientLabels: report.clientLabels)
        result = report.result
        generatedAt = ISO8601.format(report.generatedAt)
        listen = report.listen
        self.expectations = report.expectations
        provenClients = report.provenClients
        self.droppedEvents = droppedEvents
        rows = report.hosts.map { host in
            let deciding = check.owner(of: host.host).compactMap { owner in expectations.firstIndex(of: owner) }
            let results = deciding.compactMap { $0 < report.expectations.count ? report.expectations[$0] : nil }
            var notes = [host.disagreement, VerdictText.upstreamNote(host), VerdictText.profileNote(host)].compactMap {
                $0
            }
            notes +=
                host.fallbacks.map { RunFinding.fallback($0).line }
                + host.pinFailureReports.map { RunFinding.pinFailureReport($0).line }
            return Row(
                host: host.host, port: host.port, verdict: host.verdict.rawValue, attempts: host.attempts,
                connections: host.verdict == .unseen ? "none" : VerdictText.counts(host), how: host.how,
                expectation: results.isEmpty ? nil : results.map(\.expectation).joined(separator: ", "),
                holds: results.isEmpty ? nil : results.allSatisfy(\.met),
                explanation: results.isEmpty ? nil : results.map(\.explanation).joined(separator: "; "),
                profile: host.profile?.description, acceptedInvalidCertificate: host.acceptedInvalidCertificate,
                clients: host.clients.map {
                    Client(
                        address: ClientIdentity.address(ofKey: $0), name: check.clientLabels[$0] ?? $0,
                        trustsCA: check.isProven($0))
                },
                notes: notes, evidence: host.evidence, disagreement: host.disagreement)
        }
    }
}
