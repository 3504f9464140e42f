import Foundation

/// The `--report` JSON: per host verdicts, the most recent connections in detail, expectations and their
/// outcome, and the client command's status in CI mode.
public struct VerdictReport: Sendable, Codable, Equatable {
    /// `pass` (every expectation holds and the client command, if any, succeeded), `fail`, or `no-expectations`.
    public var result: String
    /// Whether the run had ended when this was written (false while the proxy is still running).
    public var final: Bool
    /// When it was written.
    public var generatedAt: Date
    /// Where the proxy listened.
    public var listen: String
    /// The CA certificate clients had to trust.
    public var caCertificate: String
    /// The silence window used for `closed-after-handshake` and `idle`, in seconds.
    public var silenceWindowSeconds: Double
    /// Per host and port verdicts, including `unseen` expected hosts.
    public var hosts: [HostVerdict]
    /// The most recent intercepted connections (full detail of every one is in the `--events` file).
    public var connections: [ConnectionVerdict]
    /// Connections decided in the run but left out of `connections` (the oldest go first).
    public var connectionsOmitted: Int
    /// Clients (identity keys: address, TLS fingerprint, program) that accepted the proxy's CA at least once (a control
    /// host or the trust probe).
    public var provenClients: [String]
    /// Whether `refused:` expectations were allowed to hold without such proof.
    public var allowUnprovenRefusals: Bool
    /// Whether trust was proven per address instead of per client (`--trust-per-address`).
    public var trustPerAddress: Bool
    /// Every client seen: address, fingerprint, the stack it looks like, the process where known.
    public var clients: [ClientIdentity]
    /// A person's name for each client key (`curl (pid 812)`).
    public var clientLabels: [String: String]
    /// The expectations and whether they held.
    public var expectations: [ExpectationResult]
    /// The client command of a CI run, once it ended.
    public var clientCommand: ClientCommandOutcome?
    /// Hosts whose client accepted a certificate of an invalid `--attack` profile.
    public var findings: [Finding]
    /// The QA rules that acted in the run and how often (absent when none did).
    public var rules: [RuleTally]?
    /// Events the recording dropped because its outputs stopped taking them (absent when none were): the verdicts and counts
    /// here are complete, but the events file and the HAR miss that many records.
    public var droppedEvents: Int?

    /// Builds a report from a run's ledger, adding `unseen` hosts for exact-name expectations nobody contacted.
    public init(
        final: Bool, generatedAt: Date = Date(), listen: String, caCertificate: String, silenceWindowSeconds: Double,
        ledger: VerdictLedger, expectations: [Expectation], allowUnprovenRefusals: Bool = false,
        trustPerAddress: Bool = false,
        clientCommand: ClientCommandOutcome? = nil, findings: RunFindings = RunFindings()
    ) {
        var hosts = ledger.hostVerdicts
        let labels = ledger.clientLabels
        let check = ExpectationCheck(
            expectations, provenClients: ledger.provenClients, allowUnprovenRefusals: allowUnprovenRefusals,
            trustPerAddress: trustPerAddress, clientLabels: labels)
        let results = check.evaluate(hosts)
        for expectation in expectations {
            let name = expectation.pattern.description
            guard !name.contains("*"), !hosts.contains(where: { $0.host == name }) else { continue }
            hosts.append(HostVerdict(host: name, verdict: .unseen, attempts: 0, counts: [:], how: []))
        }
        Self.attach(findings, to: &hosts)
        VerdictEvidence.attach(to: &hosts, check: check)
        self.final = final
        self.generatedAt = generatedAt
        self.listen = listen
        self.caCertificate = caCertificate
        self.silenceWindowSeconds = silenceWindowSeconds
        self.hosts = hosts
        self.connections = ledger.connections
        self.connectionsOmitted = ledger.omittedConnections
        self.provenClients = ledger.provenClients
        self.allowUnprovenRefusals = allowUnprovenRefusals
        self.trustPerAddress = trustPerAddress
        clients = ledger.clientIdentities
        clientLabels = labels
        self.expectations = results
        self.clientCommand = clientCommand
        self.findings = Finding.acceptedInvalid(hosts)
        let clientFailed = clientCommand.map { !$0.succeeded } ?? false
        self.result =
            results.isEmpty && !clientFailed
            ? "no-expectations" : results.allSatisfy(\.met) && !clientFailed ? "pass" : "fail"
    }

    /// Puts each fallback on its host's entries, and each pin-failure report on the entries of its `noted-hostname`
    /// (or of its `hostname` when the noted one was not contacted; a new `unseen` entry when neither was).
    private static func attach(_ findings: RunFindings, to hosts: inout [HostVerdict]) {
        for index in hosts.indices { hosts[index].fallbacks = findings.about(hosts[index].host).fallbacks }
        for report in findings.pinFailureReports {
            var names = [report.notedHostname]
            if let hostname = report.hostname { names.append(hostname) }
            let name = names.first { name in hosts.contains { $0.host == name } }
            if name == nil {
                hosts.append(
                    HostVerdict(host: report.notedHostname, verdict: .unseen, attempts: 0, counts: [:], how: []))
            }
            for index in hosts.indices where hosts[index].host == name ?? report.notedHostname {
                hosts[index].pinFailureReports.append(report)
            }
        }
    }

    /// A report of `connections` (every one kept in detail).
    public init(
        final: Bool, generatedAt: Date = Date(), listen: String, caCertificate: String, silenceWindowSeconds: Double,
        connections: [ConnectionVerdict], expectations: [Expectation], allowUnprovenRefusals: Bool = false,
        trustPerAddress: Bool = false
    ) {
        var ledger = VerdictLedger(detailLimit: connections.count)
        for connection in connections { ledger.record(connection, replacing: nil) }
        self.init(
            final: final, generatedAt: generatedAt, listen: listen, caCertificate: caCertificate,
            silenceWindowSeconds: silenceWindowSeconds, ledger: ledger, expectations: expectations,
            allowUnprovenRefusals: allowUnprovenRefusals, trustPerAddress: trustPerAddress)
    }

    private enum CodingKeys: String, CodingKey {
        case result, final, generatedAt, listen, caCertificate, silenceWindowSeconds, hosts, connections,
            connectionsOmitted
        case provenClients, allowUnprovenRefusals, expectations, clientCommand, findings, rules, trustPerAddress,
            clients, clientLabels
        case droppedEvents
    }

    /// Reads this version's reports and earlier ones (which lack the proof fields).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        result = try container.decode(String.self, forKey: .result)
        final = try container.decode(Bool.self, forKey: .final)
        generatedAt = try container.decode(Date.self, forKey: .generatedAt)
        listen = try container.decode(String.self, forKey: .listen)
        caCertificate = try container.decode(String.self, forKey: .caCertificate)
        silenceWindowSeconds = try container.decode(Double.self, forKey: .silenceWindowSeconds)
        hosts = try container.decode([HostVerdict].self, forKey: .hosts)
        connections = try container.decodeIfPresent([ConnectionVerdict].self, forKey: .connections) ?? []
        connectionsOmitted = try container.decodeIfPresent(Int.self, forKey: .connectionsOmitted) ?? 0
        let intercepting = connections.filter { $0.verdict.kind == .intercepted }.map(\.clientKey)
        provenClients =
            try container.decodeIfPresent([String].self, forKey: .provenClients) ?? Array(Set(intercepting)).sorted()
        allowUnprovenRefusals = try container.decodeIfPresent(Bool.self, forKey: .allowUnprovenRefusals) ?? false
        trustPerAddress = try container.decodeIfPresent(Bool.self, forKey: .trustPerAddress) ?? false
        clients = try container.decodeIfPresent([ClientIdentity].self, forKey: .clients) ?? []
        clientLabels = try container.decodeIfPresent([String: String].self, forKey: .clientLabels) ?? [:]
        droppedEvents = try container.decodeIfPresent(Int.self, forKey: .droppedEvents)
        expectations = try container.decode([ExpectationResult].self, forKey: .expectations)
        clientCommand = try container.decodeIfPresent(ClientCommandOutcome.self, forKey: .clientCommand)
        findings = try container.decodeIfPresent([Finding].self, forKey: .findings) ?? []
        rules = try container.decodeIfPresent([RuleTally].self, forKey: .rules)
    }

    /// Pretty, key-sorted JSON.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    /// Reads a report written by `encoded()`; a file that is not one is a `ReportDecodingError` in words.
    public static func decode(_ data: Data) throws(ReportDecodingError) -> VerdictReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(VerdictReport.self, from: data)
        } catch {
            throw ReportDecodingError(error, data: data)
        }
    }

    /// The hosts that were actually seen (not `unseen`), for re-checking expectations.
    public var seenHosts: [HostVerdict] { hosts.filter { $0.verdict != .unseen } }
}
