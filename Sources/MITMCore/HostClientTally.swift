/// One client's connections to one host and port: what a host's verdict hides when its clients disagree.
public struct HostClientTally: Sendable, Equatable, Codable {
    /// The client for a person: `curl (pid 812)`.
    public var client: String
    /// The client's identity key (what trust is proven for).
    public var key: String
    /// Connections per verdict kind, and per kind and way (ways of the kinds that are not `intercepted`).
    public var counts: VerdictCounts

    /// Creates a tally.
    public init(client: String, key: String, counts: VerdictCounts = [:]) {
        self.client = client
        self.key = key
        self.counts = counts
    }

    private enum CodingKeys: String, CodingKey {
        case client, key, counts, ways
    }

    /// Writes the ways flat, the kind first: `refused:closed-after-handshake` -> 1.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(client, forKey: .client)
        try container.encode(key, forKey: .key)
        try container.encode(counts.kindTable, forKey: .counts)
        var flat: [String: Int] = [:]
        for (kind, ways) in counts.wayTable {
            for (way, count) in ways { flat[kind + ":" + way] = count }
        }
        try container.encode(flat, forKey: .ways)
    }

    /// Reads what `encode(to:)` wrote.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        client = try container.decode(String.self, forKey: .client)
        key = try container.decode(String.self, forKey: .key)
        var wayTable: [String: [String: Int]] = [:]
        for (kindAndWay, count) in try container.decodeIfPresent([String: Int].self, forKey: .ways) ?? [:] {
            let parts = kindAndWay.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .ways, in: container, debugDescription: "\"\(kindAndWay)\" is not KIND:WAY")
            }
            wayTable[parts[0], default: [:]][parts[1]] = count
        }
        do {
            counts = try VerdictCounts(
                kindTable: container.decode([String: Int].self, forKey: .counts), wayTable: wayTable)
        } catch let error as VerdictCountsError {
            throw DecodingError.dataCorruptedError(forKey: .counts, in: container, debugDescription: error.description)
        }
    }

    var intercepted: Int { counts[.intercepted] }
    var refused: Int { counts[.refused] }

    /// `curl (pid 812) intercepted 3`, `python3 (pid 840) refused 1 (closed-after-handshake)`.
    var text: String {
        let parts = counts.kinds.map { kind -> String in
            let count = counts[kind]
            guard kind != .intercepted else { return "\(kind.rawValue) \(count)" }
            let how = counts.ways(of: kind).map(\.way.description).sorted()
            return "\(kind.rawValue) \(count)" + (how.isEmpty ? "" : " (\(how.joined(separator: ", ")))")
        }
        return "\(client) \(parts.joined(separator: ", "))"
    }
}

extension HostVerdict {
    /// `clients disagree: curl (pid 812) intercepted 3; python3 (pid 840) refused 1 (closed-after-handshake)` when one
    /// client was intercepted on this host and another only refused; nil when they agree (or there is one client).
    public var disagreement: String? {
        let accepting = byClient.filter { $0.intercepted > 0 }
        let refusing = byClient.filter { $0.intercepted == 0 && $0.refused > 0 }
        guard !accepting.isEmpty, !refusing.isEmpty else { return nil }
        return "clients disagree: " + (accepting + refusing).map(\.text).joined(separator: "; ")
    }
}
