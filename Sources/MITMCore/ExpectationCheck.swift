/// Checks `--expect` rules against a run's per-host verdicts, with the two rules that keep a green run honest:
///
/// - The most specific pattern decides for a host, so `intercepted:*.bank.test` and `refused:api.bank.test`
///   can stand together: the exact name claims `api.bank.test`, the wildcard every other subdomain. Between
///   equally specific patterns an `--expect` flag beats one read from the app's configuration (`--expect-from`).
/// - No proof from nothing: a refusal proves pinning only if the same client accepted the proxy's CA at least
///   once in the run (a control host, or the trust probe `https://mitm.proxy/`). Otherwise the refusal may
///   only mean that the CA is not installed, and a `refused:` expectation fails, unless the run was started
///   with `--allow-unproven-refusals`.
package struct ExpectationCheck: Sendable {
    /// The rules.
    package let expectations: [Expectation]
    /// Client addresses that completed at least one interception.
    package let provenClients: Set<String>
    /// Whether `refused:` may hold without proof that the client trusts the CA.
    package let allowUnprovenRefusals: Bool
    /// Whether any client of an address proves trust for every client of that address (`--trust-per-address`).
    package let trustPerAddress: Bool
    /// A person's name for each client key.
    package let clientLabels: [String: String]
    private let provenAddresses: Set<String>

    /// A check of `expectations` given the clients that proved they trust the CA.
    package init(
        _ expectations: [Expectation], provenClients: some Sequence<String>, allowUnprovenRefusals: Bool = false,
        trustPerAddress: Bool = false, clientLabels: [String: String] = [:]
    ) {
        self.expectations = expectations
        self.provenClients = Set(provenClients)
        self.allowUnprovenRefusals = allowUnprovenRefusals
        self.trustPerAddress = trustPerAddress
        self.clientLabels = clientLabels
        provenAddresses = Set(self.provenClients.map(ClientIdentity.address(ofKey:)))
    }

    /// Whether the client `key` proved it trusts the CA (or, with `trustPerAddress`, another client of its address did).
    package func isProven(_ key: String) -> Bool {
        provenClients.contains(key) || (trustPerAddress && provenAddresses.contains(ClientIdentity.address(ofKey: key)))
    }

    private func label(_ key: String) -> String { clientLabels[key] ?? key }

    /// One result per expectation, in order.
    package func evaluate(_ hosts: [HostVerdict]) -> [ExpectationResult] {
        let seen = hosts.filter { $0.verdict != .unseen }
        let matches = expectations.map { expectation in seen.filter { expectation.pattern.matches($0.host) } }
        let owned = zip(expectations, matches).map { expectation, matching in
            matching.filter { owner(of: $0.host).contains(expectation) }
        }
        // A configuration's domain with its subdomains (`refused:qa.test` and `refused:*.qa.test` from one entry) is one
        // set: the hosts of any of its expectations stand for all of them, so an app that talks to `api.qa.test` only
        // satisfies the entry, and the set is unseen only when none of its hosts was.
        var sets: [SetKey: [Int]] = [:]
        for (index, expectation) in expectations.enumerated()
        where !expectation.source.isFlag && expectation.source.domain != nil {
            sets[SetKey(expectation), default: []].append(index)
        }
        return expectations.indices.map { index in
            let expectation = expectations[index]
            var hostsOfIt = owned[index]
            var standIns: [HostVerdict] = []
            if let members = sets[SetKey(expectation)], members.count > 1, hostsOfIt.isEmpty {
                standIns = members.flatMap { owned[$0] }
                hostsOfIt = standIns
            }
            var result = evaluate(
                expectation, owned: hostsOfIt, claimedElsewhere: matches[index].count - owned[index].count)
            result.source = expectation.source
            if hostsOfIt.isEmpty, matches[index].isEmpty,
                let near = HostNameDistance.closest(to: expectation.pattern.description, among: seen.map(\.host))
            {
                result.explanation += "; did you mean \(near)? (seen in this run)"
            }
            if !standIns.isEmpty, let domain = expectation.source.domain {
                let names = Array(Set(standIns.map(\.host))).sorted().joined(separator: ", ")
                result.explanation += " (for the set of domain \(domain) and its subdomains: \(names) stood for it)"
            }
            if let note = expectation.source.note { result.explanation += " (\(note))" }
            return result
        }
    }

    /// The expectations one configuration entry made: the same file, domain and outcome.
    private struct SetKey: Hashable {
        let file: String?
        let domain: String?
        let outcome: String

        init(_ expectation: Expectation) {
            file = expectation.source.file
            domain = expectation.source.domain
            outcome = expectation.outcome.rawValue
        }
    }

    /// The expectations that decide for `host`: the most specific matching pattern, a flag before a file
    /// (several when they tie).
    package func owner(of host: String) -> [Expectation] {
        let matching = expectations.filter { $0.pattern.matches(host) }
        let rank = { (expectation: Expectation) in [expectation.pattern.specificity, expectation.source.isFlag ? 1 : 0]
        }
        guard let best = matching.map(rank).max(by: { $0.lexicographicallyPrecedes($1) }) else { return [] }
        return matching.filter { rank($0) == best }
    }

    private func evaluate(_ expectation: Expectation, owned: [HostVerdict], claimedElsewhere: Int) -> ExpectationResult
    {
        let description = expectation.description
        let pattern = expectation.pattern
        guard !expectation.outcome.isAuditConclusion else {
            return ExpectationResult(
                expectation: description, met: false, hosts: [:],
                explanation:
                    "only `mitm-proxy audit` can decide \(expectation.outcome.rawValue): (it needs a round per certificate profile)"
            )
        }
        guard !owned.isEmpty else {
            let explanation =
                claimedElsewhere > 0
                ? "every host matching \(pattern) that was seen is covered by a more specific expectation; none was left for this one (unseen)"
                : "no connection to \(pattern) was seen (unseen): the client never contacted it through the proxy"
            return ExpectationResult(expectation: description, met: false, hosts: [:], explanation: explanation)
        }
        let names = VerdictText.displayNames(owned)
        let verdicts = Dictionary(zip(names, owned.map(\.verdict.rawValue)), uniquingKeysWith: { first, _ in first })
        let wanted: HostVerdictKind = expectation.outcome == .refused ? .refused : .intercepted
        if let index = owned.firstIndex(where: { $0.verdict != wanted }) {
            return ExpectationResult(
                expectation: description, met: false, hosts: verdicts,
                explanation: "\(names[index]) was \(owned[index].verdict.rawValue), not \(wanted.rawValue)")
        }
        let list = names.joined(separator: ", ")
        guard wanted == .refused else {
            return ExpectationResult(
                expectation: description, met: true, hosts: verdicts, explanation: "\(list): \(wanted.rawValue)")
        }
        let unproven = owned.flatMap { host in host.refusedBy.filter { !isProven($0) }.map { (host, $0) } }
        guard let (host, client) = unproven.first else {
            let refusers = Set(owned.flatMap(\.refusedBy)).sorted().map(label).joined(separator: ", ")
            let perAddress = trustPerAddress && owned.contains { $0.refusedBy.contains { !provenClients.contains($0) } }
            let proof =
                perAddress
                ? "by a client whose ADDRESS accepted the proxy's CA elsewhere in the run (--trust-per-address: another program on that "
                    + "address may be the one that trusts it)"
                : "by a client that accepted the proxy's CA elsewhere in the run"
            return ExpectationResult(
                expectation: description, met: true, hosts: verdicts,
                explanation: "\(list): refused, \(proof)" + (refusers.isEmpty ? "" : " (\(refusers))"))
        }
        let how = host.how.joined(separator: ", ")
        if allowUnprovenRefusals {
            return ExpectationResult(
                expectation: description, met: true, hosts: verdicts,
                explanation:
                    "\(list): refused (\(how)), UNPROVEN: client \(label(client)) never accepted the proxy's CA; "
                    + "held only because of --allow-unproven-refusals")
        }
        let others = provenClients.sorted().map(label)
        let trusting =
            others.isEmpty
            ? "no client accepted the proxy's CA in this run"
            : "\(others.joined(separator: ", ")) trust\(others.count == 1 ? "s" : "") the CA, but that proves nothing for this client"
        return ExpectationResult(
            expectation: description, met: false, hosts: verdicts,
            explanation:
                "nothing proven for this client: \(label(client)) refused \(host.host) (\(how)) without ever accepting the proxy's CA; "
                + "\(trusting). Is the CA installed and trusted by this client? Have the same client load a control host "
                + "(--expect intercepted:HOST) or https://mitm.proxy/ through the proxy")
    }
}
