/// The account of a proxy run that stays the same size however long the run: per host and port
/// aggregates (counts per verdict kind and way), the clients that proved they trust the CA, upstream
/// outcomes, and only the most recent `detailLimit` connection verdicts (with a count of those left out).
public struct VerdictLedger: Sendable {
    private struct Key: Hashable, Sendable {
        let host: String
        let port: Int
    }

    private struct Tally: Sendable {
        var counts = VerdictCounts()
        var how: [String] = []
        var refusedBy: [String] = []
        /// Refused connections per client in `refusedBy`, so that a refusal later upgraded to an interception takes its client out.
        var refusals: [String: Int] = [:]
        var clients: [String] = []
        var profile: CertificateProfile?
        var byClient: [HostClientTally] = []

        mutating func add(_ verdict: Verdict, client: String, label: String, delta: Int) {
            tallyClient(verdict, key: client, label: label, delta: delta)
            counts.add(verdict.kind, way: verdict.way, delta: delta)
            if delta > 0, !clients.contains(client), clients.count < Self.clientLimit { clients.append(client) }
            guard verdict.kind != .intercepted else { return }
            if delta < 0 {
                forget(verdict, client: client)
                return
            }
            if !how.contains(verdict.how) { how.append(verdict.how) }
            // Bounded: a handful of addresses is what a test bench has; past that, one more says nothing new.
            if verdict.kind == .refused, refusals[client] != nil || refusedBy.count < Self.clientLimit {
                if refusals[client] == nil { refusedBy.append(client) }
                refusals[client, default: 0] += 1
            }
        }

        /// Takes back what a superseded verdict said: its way once no connection that was not intercepted has it, and
        /// its client from `refusedBy` once that client has no refusal left.
        private mutating func forget(_ verdict: Verdict, client: String) {
            let stillSaid = counts.notInterceptedAny(verdict.way)
            if !stillSaid { how.removeAll { $0 == verdict.how } }
            guard verdict.kind == .refused, let count = refusals[client] else { return }
            if count > 1 {
                refusals[client] = count - 1
            } else {
                refusals.removeValue(forKey: client)
                refusedBy.removeAll { $0 == client }
            }
        }

        /// Per client and process; bounded like the other client lists.
        private mutating func tallyClient(_ verdict: Verdict, key: String, label: String, delta: Int) {
            let index: Int
            if let found = byClient.firstIndex(where: { $0.client == label && $0.key == key }) {
                index = found
            } else {
                guard delta > 0, byClient.count < Self.clientLimit else { return }
                byClient.append(HostClientTally(client: label, key: key))
                index = byClient.count - 1
            }
            byClient[index].counts.add(
                verdict.kind, way: verdict.kind == .intercepted ? nil : verdict.way, delta: delta)
        }

        static let clientLimit = 64
    }

    /// How many connection verdicts are kept in detail.
    public let detailLimit: Int
    private var tallies: [Key: Tally] = [:]
    private var upstream: [Key: UpstreamOutcome] = [:]
    private var proven: Set<String> = []
    private var identities: [String: ClientIdentity] = [:]
    private var pids: [String: [Int32]] = [:]
    private var recent: [ConnectionVerdict] = []
    private var nextSlot = 0
    /// Connection verdicts recorded but no longer kept in detail (the oldest go first).
    public private(set) var omittedConnections = 0

    /// An empty ledger keeping `detailLimit` connections in detail.
    public init(detailLimit: Int) {
        self.detailLimit = max(0, detailLimit)
    }

    /// Adds a decided verdict; `previous` is the verdict it supersedes on the same connection (inconclusive
    /// upgraded to intercepted), so that connection is counted once.
    public mutating func record(_ connection: ConnectionVerdict, replacing previous: Verdict?) {
        let client = connection.clientKey
        let label = connection.clientLabel
        // One lookup of the host's tally: every decided connection passes here.
        modifyTally(Key(host: connection.host, port: connection.port)) { tally in
            if let previous { tally.add(previous, client: client, label: label, delta: -1) }
            tally.add(connection.verdict, client: client, label: label, delta: 1)
            tally.profile = connection.profile
        }
        if let identity = connection.identity { remember(identity, key: client) }
        if connection.verdict.kind == .intercepted { proven.insert(client) }
        if previous != nil, let index = recent.lastIndex(where: { $0.connectionID == connection.connectionID }) {
            recent[index] = connection
        } else {
            keep(connection)
        }
    }

    private mutating func modifyTally(_ key: Key, _ change: (inout Tally) -> Void) {
        change(&tallies[key, default: Tally()])
    }

    /// A client loaded the proxy's trust probe (`https://mitm.proxy/`): it trusts the CA.
    public mutating func proveClient(_ client: String) { proven.insert(client) }

    /// A client loaded the proxy's trust probe: `identity` trusts the CA.
    public mutating func proveClient(_ identity: ClientIdentity) {
        let key = identity.key
        proven.insert(key)
        remember(identity, key: key)
    }

    /// Keeps the latest identity of each client key and the pids seen with it (bounded: a run has a handful of clients).
    private mutating func remember(_ identity: ClientIdentity, key: String) {
        guard identities[key] != nil || identities.count < Self.identityLimit else { return }
        identities[key] = identity
        if let pid = identity.process?.pid, pids[key, default: []].count < 8, !pids[key, default: []].contains(pid) {
            pids[key, default: []].append(pid)
        }
    }

    static let identityLimit = 256

    /// Every client seen, by key: its latest identity, for the report's client list.
    public var clientIdentities: [ClientIdentity] { identities.keys.sorted().compactMap { identities[$0] } }

    /// A person's name for each client key: `curl (pids 812, 815)`.
    public var clientLabels: [String: String] {
        identities.mapValues { $0.label(pids: pids[$0.key] ?? []) }
    }

    /// A request on an intercepted connection ended; `answeredWith502` when the proxy answered it because the upstream failed.
    public mutating func recordRequest(host: String, port: Int, answeredWith502 failure: String?) {
        Self.count(&upstream[Key(host: host, port: port), default: UpstreamOutcome()], answeredWith502: failure)
    }

    /// Changes `outcome` in place, so that a request costs one lookup of its host.
    private static func count(_ outcome: inout UpstreamOutcome, answeredWith502 failure: String?) {
        outcome.requests += 1
        if let failure {
            outcome.answeredWith502 += 1
            // The upstream failure event's reason, when there was one, says it without the host:port prefix.
            if outcome.lastFailure == nil { outcome.lastFailure = failure }
        }
    }

    /// The upstream of `host:port` could not be reached or verified.
    public mutating func recordUpstreamFailure(host: String, port: Int, reason: String) {
        upstream[Key(host: host, port: port), default: UpstreamOutcome()].lastFailure = reason
    }

    /// Per host and port, sorted by host then port.
    public var hostVerdicts: [HostVerdict] {
        tallies.keys.sorted { ($0.host, $0.port) < ($1.host, $1.port) }.compactMap(hostVerdict)
    }

    /// The aggregates of `host` (one per port it was seen on).
    public func hostVerdicts(named host: String) -> [HostVerdict] {
        tallies.keys.filter { $0.host == host }.sorted { $0.port < $1.port }.compactMap(hostVerdict)
    }

    private func hostVerdict(_ key: Key) -> HostVerdict? {
        guard let tally = tallies[key] else { return nil }
        let attempts = tally.counts.total
        guard attempts > 0 else { return nil }
        let failures = upstream[key].flatMap { $0.lastFailure == nil ? nil : $0 }
        return HostVerdict(
            host: key.host, port: key.port, verdict: HostVerdict.kind(counts: tally.counts), attempts: attempts,
            counts: tally.counts, how: tally.how, refusedBy: tally.refusedBy, clients: tally.clients,
            upstream: failures, profile: tally.profile, byClient: tally.byClient)
    }

    /// Clients that completed at least one interception (or loaded the trust probe).
    public var provenClients: [String] { proven.sorted() }

    /// The most recent connection verdicts, oldest first.
    public var connections: [ConnectionVerdict] {
        guard recent.count == detailLimit else { return recent }
        return Array(recent[nextSlot...] + recent[..<nextSlot])
    }

    private mutating func keep(_ connection: ConnectionVerdict) {
        guard detailLimit > 0 else {
            omittedConnections += 1
            return
        }
        if recent.count < detailLimit {
            recent.append(connection)
            return
        }
        recent[nextSlot] = connection
        nextSlot = (nextSlot + 1) % detailLimit
        omittedConnections += 1
    }
}
