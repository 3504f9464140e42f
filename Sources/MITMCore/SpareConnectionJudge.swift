/// Tells a spare connection from a refusal (DESIGN.md "Verdicts"; issue 10, observation 10).
///
/// A browser opens more connections than it uses: a duplicate HTTP/2 connection, a pre-connected socket
/// closed when it exits. Such a connection completes the handshake (so the certificate was accepted) and
/// closes without a request, which on its own reads as `refused/closed-after-handshake`. It is `unused`
/// instead when the same client had an intercepted connection to the same host and port in the same
/// stretch of time: open at any moment from one silence window before the candidate's handshake to one
/// silence window after its close. A pinned client never has such a sibling, so its refusals stay refusals.
///
/// Sans-io: events in with the time, rulings out. A candidate without a sibling yet is held until one
/// silence window after its close (a sibling may send its first request a moment later), then ruled a refusal.
public struct SpareConnectionJudge: Sendable {
    /// Connections that can be siblings: the same client address, host and port.
    public struct Key: Hashable, Sendable {
        /// The client's IP address.
        public let client: String
        /// The host the client asked for.
        public let host: String
        /// The CONNECT port.
        public let port: Int
        /// Hashed once: a connection's key is looked up several times, and its two strings are what hashing costs.
        private let hash: Int

        /// Creates a key.
        public init(client: String, host: String, port: Int) {
            self.client = client
            self.host = host
            self.port = port
            var hasher = Hasher()
            hasher.combine(client)
            hasher.combine(host)
            hasher.combine(port)
            hash = hasher.finalize()
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        public static func == (left: Key, right: Key) -> Bool {
            left.hash == right.hash && left.port == right.port && left.host == right.host && left.client == right.client
        }
    }

    /// What the judge is told, with the time in seconds on a monotonic clock.
    public enum Event: Sendable, Equatable {
        /// A connection was intercepted (the client sent a request on it).
        case intercepted(connection: Int, key: Key, at: Double)
        /// A connection went away (any connection; those the judge does not know are ignored).
        case closed(connection: Int, at: Double)
        /// A connection completed its handshake at `handshakeAt` and closed at `at` without a request.
        case closedWithoutRequest(connection: Int, key: Key, handshakeAt: Double, at: Double)
        /// Time passed.
        case tick(at: Double)
        /// The proxy is stopping: rule on every held candidate now.
        case flush
    }

    /// A ruling on a candidate.
    public enum Ruling: Sendable, Equatable {
        /// A spare: `sibling` is the intercepted connection that was used instead.
        case unused(connection: Int, sibling: Int)
        /// No sibling within the window: the refusal stands.
        case refused(connection: Int)
    }

    /// The possible siblings of one key: those open (by the order they were intercepted in) and the one closed
    /// last (a candidate only asks whether one closed late enough, so the latest close answers for all).
    private struct Siblings: Sendable {
        var open: [Int: UInt64] = [:]
        var lastClosed: (connection: Int, at: Double)?

        /// `connection` closed at `time`: it is no longer open, and the last closed if none closed later.
        mutating func close(_ connection: Int, at time: Double) {
            guard open.removeValue(forKey: connection) != nil else { return }
            if time >= lastClosed?.at ?? -.infinity { lastClosed = (connection, time) }
        }

        /// The sibling to name for a candidate whose handshake was at `handshakeAt`: the latest opened of those
        /// still open, else the last closed if it closed no earlier than one window before.
        func sibling(forHandshakeAt handshakeAt: Double, window: Double) -> Int? {
            if let latest = open.max(by: { $0.value < $1.value }) { return latest.key }
            guard let lastClosed, lastClosed.at >= handshakeAt - window else { return nil }
            return lastClosed.connection
        }
    }

    private struct Candidate: Sendable {
        let key: Key
        let handshakeAt: Double
        let deadline: Double
    }

    private let window: Double
    private var siblings: [Key: Siblings] = [:]
    private var siblingKeys: [Int: Key] = [:]
    private var interceptions: UInt64 = 0
    private var held: [Int: Candidate] = [:]

    /// A judge using `silenceWindow` seconds as "the same stretch of time".
    public init(silenceWindow: Double) { window = silenceWindow }

    /// When the next held candidate is due (feed `.tick` then), or nil when none is held.
    public var nextDeadline: Double? { held.values.map(\.deadline).min() }

    /// Candidates waiting for a sibling.
    public var heldCount: Int { held.count }

    /// Feeds one event; returns the rulings it makes.
    public mutating func receive(_ event: Event) -> [Ruling] {
        switch event {
        case .intercepted(let connection, let key, _):
            interceptions += 1
            siblings[key, default: Siblings()].open[connection] = interceptions
            siblingKeys[connection] = key
            // Every intercepted connection passes here; candidates are rare, so the usual case hashes the key once.
            guard !held.isEmpty else { return [] }
            let waiting = held.filter { $0.value.key == key }.keys.sorted()
            for id in waiting { held.removeValue(forKey: id) }
            return waiting.map { .unused(connection: $0, sibling: connection) }
        case .closed(let connection, let time):
            guard let key = siblingKeys.removeValue(forKey: connection) else { return [] }
            siblings[key]?.close(connection, at: time)
            return []
        case .closedWithoutRequest(let connection, let key, let handshakeAt, let time):
            if let sibling = siblings[key]?.sibling(forHandshakeAt: handshakeAt, window: window) {
                return [.unused(connection: connection, sibling: sibling)]
            }
            held[connection] = Candidate(key: key, handshakeAt: handshakeAt, deadline: time + window)
            return []
        case .tick(let time):
            let due = held.filter { $0.value.deadline <= time }.keys.sorted()
            for id in due { held.removeValue(forKey: id) }
            forgetSiblings(closedBefore: time - 2 * window)
            return due.map { .refused(connection: $0) }
        case .flush:
            let all = held.keys.sorted()
            held.removeAll()
            return all.map { .refused(connection: $0) }
        }
    }

    /// A candidate's handshake is at most one window before its close, which is no earlier than now, so a
    /// sibling closed more than two windows ago can never qualify again.
    private mutating func forgetSiblings(closedBefore limit: Double) {
        for (key, list) in siblings where list.open.isEmpty && (list.lastClosed?.at ?? -.infinity) < limit {
            siblings[key] = nil
        }
    }
}
