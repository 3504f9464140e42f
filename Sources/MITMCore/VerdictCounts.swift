/// Connections per verdict kind, and per kind and way: `counts[.refused]` connections were refused,
/// `counts[.refused, VerdictWay(reason: .closedAfterHandshake)]` of them by hanging up after the handshake.
public struct VerdictCounts: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var perKind: [VerdictKind: Int] = [:]
    private var perWay: [VerdictKind: [VerdictWay: Int]] = [:]

    /// No connection counted.
    public init() {}

    /// Counts per kind, without ways (for a test's expected value).
    public init(dictionaryLiteral elements: (VerdictKind, Int)...) {
        for (kind, count) in elements where count != 0 { perKind[kind, default: 0] += count }
    }

    /// Connections with verdict `kind`.
    public subscript(kind: VerdictKind) -> Int { perKind[kind, default: 0] }

    /// Connections with verdict `kind` reached in `way`.
    public subscript(kind: VerdictKind, way: VerdictWay) -> Int { perWay[kind]?[way] ?? 0 }

    /// Every connection counted.
    public var total: Int { perKind.values.reduce(0, +) }

    /// The kinds with at least one connection, in `VerdictKind.allCases` order.
    public var kinds: [VerdictKind] { VerdictKind.allCases.filter { self[$0] > 0 } }

    /// The ways of `kind` with their counts, the most frequent first (then by name).
    public func ways(of kind: VerdictKind) -> [(way: VerdictWay, count: Int)] {
        (perWay[kind] ?? [:]).map { (way: $0.key, count: $0.value) }
            .sorted { ($1.count, $0.way.description) < ($0.count, $1.way.description) }
    }

    /// Whether a connection that was not intercepted was counted with `way`.
    func notInterceptedAny(_ way: VerdictWay) -> Bool {
        perWay.contains { kind, ways in kind != .intercepted && ways[way] != nil }
    }

    /// Adds `delta` (negative: takes back) connections of `kind` reached in `way`; a count back at zero is removed.
    mutating func add(_ kind: VerdictKind, way: VerdictWay?, delta: Int) {
        perKind[kind, default: 0] += delta
        if let way { perWay[kind, default: [:]][way, default: 0] += delta }
        guard delta <= 0 else { return }
        if perKind[kind] == 0 { perKind.removeValue(forKey: kind) }
        if let way, perWay[kind]?[way] == 0 { perWay[kind]?.removeValue(forKey: way) }
        if perWay[kind]?.isEmpty == true { perWay.removeValue(forKey: kind) }
    }

    /// `{"refused": 2}`, as reports write the counts.
    var kindTable: [String: Int] { Dictionary(uniqueKeysWithValues: perKind.map { ($0.key.rawValue, $0.value) }) }

    /// `{"refused": {"alert unknown_ca": 2}}`, as reports write the ways.
    var wayTable: [String: [String: Int]] {
        Dictionary(
            uniqueKeysWithValues: perWay.map { kind, ways in
                (kind.rawValue, Dictionary(uniqueKeysWithValues: ways.map { ($0.key.description, $0.value) }))
            })
    }

    /// The counts a report wrote (`kindTable`, `wayTable`); throws on a kind or way that does not exist.
    init(kindTable: [String: Int], wayTable: [String: [String: Int]]) throws(VerdictCountsError) {
        for (name, count) in kindTable {
            guard let kind = VerdictKind(rawValue: name) else { throw VerdictCountsError(word: name) }
            perKind[kind] = count
        }
        for (name, ways) in wayTable {
            guard let kind = VerdictKind(rawValue: name) else { throw VerdictCountsError(word: name) }
            for (text, count) in ways {
                guard let way = VerdictWay(text: text) else { throw VerdictCountsError(word: text) }
                perWay[kind, default: [:]][way] = count
            }
        }
    }
}

/// A report names a verdict kind or way this version does not know.
struct VerdictCountsError: Error, CustomStringConvertible {
    let word: String
    var description: String { "unknown verdict kind or way \"\(word)\" in the counts" }
}
