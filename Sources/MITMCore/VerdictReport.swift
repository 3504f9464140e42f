import Foundation

/// The `--report` JSON: per host and per connection verdicts, expectations and their outcome.
public struct VerdictReport: Sendable, Codable, Equatable {
    /// `pass` (every expectation holds), `fail`, or `no-expectations`.
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
    /// Per-host verdicts, including `unseen` expected hosts.
    public var hosts: [HostVerdict]
    /// Every intercepted connection.
    public var connections: [ConnectionVerdict]
    /// The expectations and whether they held.
    public var expectations: [ExpectationResult]

    /// Builds a report, adding `unseen` hosts for exact-name expectations nobody contacted.
    public init(final: Bool, generatedAt: Date = Date(), listen: String, caCertificate: String, silenceWindowSeconds: Double,
                connections: [ConnectionVerdict], expectations: [Expectation]) {
        var hosts = HostVerdict.aggregate(connections)
        let results = expectations.map { $0.evaluate(hosts) }
        for expectation in expectations {
            let name = expectation.pattern.description
            guard !name.contains("*"), !hosts.contains(where: { $0.host == name }) else { continue }
            hosts.append(HostVerdict(host: name, verdict: .unseen, attempts: 0, counts: [:], how: []))
        }
        self.final = final
        self.generatedAt = generatedAt
        self.listen = listen
        self.caCertificate = caCertificate
        self.silenceWindowSeconds = silenceWindowSeconds
        self.hosts = hosts
        self.connections = connections
        self.expectations = results
        self.result = results.isEmpty ? "no-expectations" : results.allSatisfy(\.met) ? "pass" : "fail"
    }

    /// Pretty, key-sorted JSON.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    /// Reads a report written by `encoded()`.
    public static func decode(_ data: Data) throws -> VerdictReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(VerdictReport.self, from: data)
    }

    /// The hosts that were actually seen (not `unseen`), for re-checking expectations.
    public var seenHosts: [HostVerdict] { hosts.filter { $0.verdict != .unseen } }
}
