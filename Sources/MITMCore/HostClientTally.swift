/// One client's connections to one host and port: what a host's verdict hides when its clients disagree.
public struct HostClientTally: Sendable, Equatable, Codable {
    /// The client for a person: `curl (pid 812)`.
    public var client: String
    /// The client's identity key (what trust is proven for).
    public var key: String
    /// Connections per verdict kind.
    public var counts: [String: Int]
    /// Connections per kind and way, the kind first: `refused:closed-after-handshake` -> 1.
    public var ways: [String: Int]

    /// Creates a tally.
    public init(client: String, key: String, counts: [String: Int] = [:], ways: [String: Int] = [:]) {
        self.client = client
        self.key = key
        self.counts = counts
        self.ways = ways
    }

    var intercepted: Int { counts[VerdictKind.intercepted.rawValue, default: 0] }
    var refused: Int { counts[VerdictKind.refused.rawValue, default: 0] }

    /// `curl (pid 812) intercepted 3`, `python3 (pid 840) refused 1 (closed-after-handshake)`.
    var text: String {
        let parts = VerdictKind.allCases.compactMap { kind -> String? in
            guard let count = counts[kind.rawValue], count > 0 else { return nil }
            guard kind != .intercepted else { return "\(kind.rawValue) \(count)" }
            let prefix = kind.rawValue + ":"
            let how = ways.filter { $0.value > 0 && $0.key.hasPrefix(prefix) }.keys.map { String($0.dropFirst(prefix.count)) }.sorted()
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
