/// Tells a spare connection from a refusal (DESIGN.md "Verdicts").
///
/// A browser opens more connections than it uses: a duplicate HTTP/2 connection, a pre-connected socket it gives up
/// on. Such a connection closes without a request, which on its own reads as a refusal (`closed-after-handshake`, or
/// `closed-in-handshake` when it gave up during the handshake). It is `unused` instead when it was open **at the same
/// time** as an intercepted sibling of the **same client** (identity key) to the same host and port: the sibling
/// opened before the candidate closed, and the candidate opened before the sibling ended. A connection that starts
/// after its sibling ended is judged on its own: a pinned client that follows an unpinned one stays refused.
///
/// Sans-io: events in with the time, rulings out. A candidate with no sibling yet is held until one silence window
/// after its close (a sibling opened meanwhile may send its first request a moment later), then ruled a refusal.
package struct SpareConnectionJudge: Sendable {
    /// Connections that can be siblings: the same client, host and port.
    package struct Key: Hashable, Sendable {
        /// The client's identity key (address, fingerprint, program).
        package let client: String
        /// The host the client asked for.
        package let host: String
        /// The CONNECT port.
        package let port: Int
        /// Hashed once: a connection's key is looked up several times, and its two strings are what hashing costs.
        private let hash: Int

        /// Creates a key.
        package init(client: String, host: String, port: Int) {
            self.client = client
            self.host = host
            self.port = port
            var hasher = Hasher()
            hasher.combine(client)
            hasher.combine(host)
            hasher.combine(port)
            hash = hasher.finalize()
        }

        package func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        package static func == (left: Key, right: Key) -> Bool {
            left.hash == right.hash && left.port == right.port && left.host == right.host && left.client == right.client
        }
    }

    /// What the judge is told, with times in seconds on a monotonic clock.
    package enum Event: Sendable, Equatable {
        /// A connection opened at `openedAt` was intercepted (the client sent a request on it).
        case intercepted(connection: Int, key: Key, openedAt: Double)
        /// A connection went away (any connection; those the judge does not know are ignored).
        case closed(connection: Int, at: Double)
        /// A connection opened at `openedAt` closed at `at` without a request (during or after its handshake).
        case closedWithoutRequest(connection: Int, key: Key, openedAt: Double, at: Double)
        /// Time passed.
        case tick(at: Double)
        /// The proxy is stopping: rule on every held candidate now.
        case flush
    }

    /// A ruling on a candidate.
    package enum Ruling: Sendable, Equatable {
        /// A spare: `sibling` is the intercepted connection, open at the same time, that was used instead.
        case unused(connection: Int, sibling: Int)
        /// No sibling open at the same time: the refusal stands.
        case refused(connection: Int)
    }

    private struct Sibling: Sendable {
        let connection: Int
        let openedAt: Double
        var closedAt: Double?

        /// Whether this sibling and a candidate open from `openedAt` to `closedAt` were open at the same time.
        func overlaps(openedAt start: Double, closedAt end: Double) -> Bool {
            openedAt <= end && (closedAt ?? .infinity) > start
        }
    }

    private struct Candidate: Sendable {
        let key: Key
        let openedAt: Double
        let closedAt: Double
        var deadline: Double
    }

    private let window: Double
    private let retention: Double
    private var siblings: [Key: [Sibling]] = [:]
    private var siblingKeys: [Int: Key] = [:]
    private var held: [Int: Candidate] = [:]
    private var closesSincePruning = 0

    /// The most closed siblings kept per key; the latest are the ones a new candidate can overlap.
    static let closedSiblingLimit = 64

    /// A judge using `silenceWindow` seconds as the wait for a sibling's first request. A closed sibling is kept
    /// `retention` seconds: a candidate that opened longer ago than that (a handshake held open) is judged on its own.
    package init(silenceWindow: Double, retention: Double = 120) {
        window = silenceWindow
        self.retention = max(retention, 2 * silenceWindow)
    }

    /// When the next held candidate is due (feed `.tick` then), or nil when none is held.
    package var nextDeadline: Double? { held.values.map(\.deadline).min() }

    /// Candidates waiting for a sibling.
    package var heldCount: Int { held.count }

    /// Feeds one event; returns the rulings it makes.
    package mutating func receive(_ event: Event) -> [Ruling] {
        switch event {
        case .intercepted(let connection, let key, let openedAt):
            siblings[key, default: []].append(Sibling(connection: connection, openedAt: openedAt))
            siblingKeys[connection] = key
            // Every intercepted connection passes here; candidates are rare, so the usual case hashes the key once.
            guard !held.isEmpty else { return [] }
            let waiting = held.filter { $0.value.key == key && openedAt <= $0.value.closedAt }.keys.sorted()
            for id in waiting { held.removeValue(forKey: id) }
            return waiting.map { .unused(connection: $0, sibling: connection) }
        case .closed(let connection, let time):
            guard let key = siblingKeys.removeValue(forKey: connection),
                let index = siblings[key]?.firstIndex(where: { $0.connection == connection })
            else { return [] }
            siblings[key]?[index].closedAt = time
            trimClosed(key)
            // Keys of hosts no longer visited would otherwise stay for the whole run.
            closesSincePruning += 1
            if closesSincePruning >= 1024 {
                closesSincePruning = 0
                forgetSiblings(closedBefore: time - retention)
            }
            return []
        case .closedWithoutRequest(let connection, let key, let openedAt, let time):
            let overlapping = siblings[key]?.last { $0.overlaps(openedAt: openedAt, closedAt: time) }
            if let sibling = overlapping { return [.unused(connection: connection, sibling: sibling.connection)] }
            held[connection] = Candidate(key: key, openedAt: openedAt, closedAt: time, deadline: time + window)
            return []
        case .tick(let time):
            let due = held.filter { $0.value.deadline <= time }.keys.sorted()
            for id in due { held.removeValue(forKey: id) }
            forgetSiblings(closedBefore: time - retention)
            return due.map { .refused(connection: $0) }
        case .flush:
            let all = held.keys.sorted()
            held.removeAll()
            return all.map { .refused(connection: $0) }
        }
    }

    /// Keeps at most `closedSiblingLimit` closed siblings of `key`, dropping the earliest closed.
    private mutating func trimClosed(_ key: Key) {
        guard let list = siblings[key], list.count > Self.closedSiblingLimit else { return }
        let closed = list.filter { $0.closedAt != nil }
        guard closed.count > Self.closedSiblingLimit else { return }
        let cutoff = closed.map { $0.closedAt! }.sorted()[closed.count - Self.closedSiblingLimit]
        siblings[key] = list.filter { ($0.closedAt ?? .infinity) >= cutoff }
    }

    private mutating func forgetSiblings(closedBefore limit: Double) {
        for (key, list) in siblings {
            let kept = list.filter { ($0.closedAt ?? .infinity) >= limit }
            siblings[key] = kept.isEmpty ? nil : kept
        }
    }
}
