import MITMCore
import Synchronization

/// The web UI's replays travel through the proxy's own listener as a client would, over loopback. Each one's connection
/// is known here by its client-side address (`127.0.0.1:50123`), registered before its first byte is written: the
/// connection that accepts it records its exchange as a replay of the original flow, and keeps the web UI user's
/// access (a user on another machine does not reach this machine's services through a replay). Nothing a client sends
/// can put a connection here.
final class ReplayTags: Sendable {
    /// What a replay connection carries.
    struct Tag: Sendable, Equatable {
        /// The flow it replays; nil for a request composed from scratch.
        let replayOf: Int?
        /// The web UI user's address when that user may not reach this machine's services; nil when they may.
        let guardedClient: String?
    }

    private let tags = Mutex<[String: Tag]>([:])
    /// Whether any tag is registered: connections skip the lock when none is (almost always).
    private let count = Atomic<Int>(0)

    /// Registers the connection from `clientAddress`.
    func register(_ tag: Tag, clientAddress: String) {
        let added = tags.withLock { $0.updateValue(tag, forKey: clientAddress) == nil }
        if added { count.add(1, ordering: .relaxed) }
    }

    /// Forgets the connection from `clientAddress`.
    func remove(clientAddress: String) {
        if tags.withLock({ $0.removeValue(forKey: clientAddress) }) != nil { count.subtract(1, ordering: .relaxed) }
    }

    /// The tag of the connection whose client is at `peer` (`host:port`), if it is a replay.
    func tag(forPeer peer: String) -> Tag? {
        guard count.load(ordering: .relaxed) > 0 else { return nil }
        return tags.withLock { $0[peer] }
    }
}
