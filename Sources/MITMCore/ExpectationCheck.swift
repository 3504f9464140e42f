/// Checks `--expect` rules against a run's per-host verdicts, with the two rules that keep a green run honest:
///
/// - The most specific pattern decides for a host, so `intercepted:*.bank.test` and `refused:api.bank.test`
///   can stand together: the exact name claims `api.bank.test`, the wildcard every other subdomain. Between
///   equally specific patterns an `--expect` flag beats one read from the app's configuration (`--expect-from`).
/// - No proof from nothing: a refusal proves pinning only if the same client accepted the proxy's CA at least
///   once in the run (a control host, or the trust probe `https://mitm.proxy/`). Otherwise the refusal may
///   only mean that the CA is not installed, and a `refused:` expectation fails, unless the run was started
///   with `--allow-unproven-refusals`.
public struct ExpectationCheck: Sendable {
    /// The rules.
    public let expectations: [Expectation]
    /// Client addresses that completed at least one interception.
    public let provenClients: Set<String>
    /// Whether `refused:` may hold without proof that the client trusts the CA.
    public let allowUnprovenRefusals: Bool

    /// A check of `expectations` given the clients that proved they trust the CA.
    public init(_ expectations: [Expectation], provenClients: some Sequence<String>, allowUnprovenRefusals: Bool = false) {
        self.expectations = expectations
        self.provenClients = Set(provenClients)
        self.allowUnprovenRefusals = allowUnprovenRefusals
    }

    /// One result per expectation, in order.
    public func evaluate(_ hosts: [HostVerdict]) -> [ExpectationResult] {
        let seen = hosts.filter { $0.verdict != .unseen }
        return expectations.map { expectation in
            let matching = seen.filter { expectation.pattern.matches($0.host) }
            let owned = matching.filter { owner(of: $0.host).contains(expectation) }
            var result = evaluate(expectation, owned: owned, claimedElsewhere: matching.count - owned.count)
            result.source = expectation.source
            if let note = expectation.source.note { result.explanation += " (\(note))" }
            return result
        }
    }

    /// The expectations that decide for `host`: the most specific matching pattern, a flag before a file
    /// (several when they tie).
    public func owner(of host: String) -> [Expectation] {
        let matching = expectations.filter { $0.pattern.matches(host) }
        let rank = { (expectation: Expectation) in [expectation.pattern.specificity, expectation.source.isFlag ? 1 : 0] }
        guard let best = matching.map(rank).max(by: { $0.lexicographicallyPrecedes($1) }) else { return [] }
        return matching.filter { rank($0) == best }
    }

    private func evaluate(_ expectation: Expectation, owned: [HostVerdict], claimedElsewhere: Int) -> ExpectationResult {
        let description = expectation.description
        let pattern = expectation.pattern
        guard !expectation.outcome.isAuditConclusion else {
            return ExpectationResult(expectation: description, met: false, hosts: [:],
                                     explanation: "only `mitm-proxy audit` can decide \(expectation.outcome.rawValue): (it needs a round per certificate profile)")
        }
        guard !owned.isEmpty else {
            let explanation = claimedElsewhere > 0
                ? "every host matching \(pattern) that was seen is covered by a more specific expectation; none was left for this one (unseen)"
                : "no connection to \(pattern) was seen (unseen): the client never contacted it through the proxy"
            return ExpectationResult(expectation: description, met: false, hosts: [:], explanation: explanation)
        }
        let names = VerdictText.displayNames(owned)
        let verdicts = Dictionary(zip(names, owned.map(\.verdict.rawValue)), uniquingKeysWith: { first, _ in first })
        let wanted: HostVerdictKind = expectation.outcome == .refused ? .refused : .intercepted
        if let index = owned.firstIndex(where: { $0.verdict != wanted }) {
            return ExpectationResult(expectation: description, met: false, hosts: verdicts,
                                     explanation: "\(names[index]) was \(owned[index].verdict.rawValue), not \(wanted.rawValue)")
        }
        let list = names.joined(separator: ", ")
        guard wanted == .refused else {
            return ExpectationResult(expectation: description, met: true, hosts: verdicts, explanation: "\(list): \(wanted.rawValue)")
        }
        let unproven = owned.flatMap { host in host.refusedBy.filter { !provenClients.contains($0) }.map { (host, $0) } }
        guard let (host, client) = unproven.first else {
            return ExpectationResult(expectation: description, met: true, hosts: verdicts,
                                     explanation: "\(list): refused, by a client that accepted the proxy's CA elsewhere in the run")
        }
        let how = host.how.joined(separator: ", ")
        if allowUnprovenRefusals {
            return ExpectationResult(expectation: description, met: true, hosts: verdicts,
                                     explanation: "\(list): refused (\(how)), UNPROVEN: client \(client) never accepted the proxy's CA; "
                                        + "held only because of --allow-unproven-refusals")
        }
        return ExpectationResult(
            expectation: description, met: false, hosts: verdicts,
            explanation: "nothing proven: this client (\(client)) never accepted the proxy's CA (\(how)): is the CA installed and trusted? "
                + "Add a control host (--expect intercepted:HOST) or load https://mitm.proxy/ through the proxy from the same client")
    }
}
