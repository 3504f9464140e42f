import MITMIO
import MITMTLS

/// An upstream TLS connection left idle by a client that went away, kept for the next client of the
/// same origin so it skips the TCP connect and the TLS handshake. One pool per loop: a socket cannot
/// change loops.
// @unchecked Sendable: touched only on its loop's queue, like the pool that holds it.
final class PooledUpstream: @unchecked Sendable {
    let leg: TLSLeg
    /// The CONNECT host and port it was opened for, and the SNI it sent.
    let host: String
    let port: Int
    let serverName: String?
    /// The upstream's leaf, whose names the forged certificate copies.
    let certificate: X509Certificate?
    /// The upstream's IP address.
    let address: String
    /// The ALPN protocols offered when it was opened (a client offering others needs a new connection).
    let offeredALPN: [String]
    fileprivate var expiry: LoopTimer?

    init(leg: TLSLeg, host: String, port: Int, serverName: String?, certificate: X509Certificate?, address: String,
         offeredALPN: [String]) {
        self.leg = leg
        self.host = host
        self.port = port
        self.serverName = serverName
        self.certificate = certificate
        self.address = address
        self.offeredALPN = offeredALPN
    }
}

/// Idle upstream connections of one loop, by origin, bounded in number and idle time; and the loop's HTTP/2
/// upstream connections, which client connections share while they have room for more streams.
/// Confined to its loop.
// @unchecked Sendable: touched only on its loop's queue; expiry timers fire there.
final class UpstreamPool: @unchecked Sendable {
    private struct Key: Hashable {
        let host: String
        let port: Int
    }

    private let loop: EventLoop
    /// How long an unused connection is kept.
    let idleSeconds: Double
    private var shared: [UpstreamPoolKey: [SharedHTTP2Upstream]] = [:]
    private var idle: [Key: [PooledUpstream]] = [:]
    private var count = 0
    private var forgeNames = ForgeNamesMemo()
    private static let perOrigin = 16
    private static let total = 256

    init(loop: EventLoop, idleSeconds: Double) {
        self.loop = loop
        self.idleSeconds = idleSeconds
    }

    /// The names a leaf forged for `primary` carries, given the upstream's certificate (remembered per certificate:
    /// see `ForgeNamesMemo`).
    func forgedNames(primary: String, upstream: X509Certificate?) -> [SubjectAlternativeName] {
        forgeNames.names(primary: primary, upstream: upstream)
    }

    /// An idle connection to `host:port` (the newest that `usable` accepts), removed from the pool, or nil.
    func take(host: String, port: Int, where usable: (PooledUpstream) -> Bool = { _ in true }) -> PooledUpstream? {
        let key = Key(host: host, port: port)
        guard var entries = idle[key], let index = entries.lastIndex(where: usable) else { return nil }
        let entry = entries.remove(at: index)
        idle[key] = entries.isEmpty ? nil : entries
        count -= 1
        entry.expiry?.cancel()
        entry.expiry = nil
        entry.leg.onEvent = nil
        return entry
    }

    /// Keeps `entry` until it expires, its server closes it, or it is taken.
    func park(_ entry: PooledUpstream) {
        let key = Key(host: entry.host, port: entry.port)
        guard idleSeconds > 0, count < Self.total, idle[key, default: []].count < Self.perOrigin else {
            entry.leg.close()
            return
        }
        idle[key, default: []].append(entry)
        count += 1
        entry.leg.compactIdleMemory()
        entry.leg.onEvent = { [unowned self, unowned entry] event in
            // Anything from an idle server (a close, an unsolicited byte) makes the connection unusable.
            if case .drained = event { return }
            evict(entry)
        }
        entry.leg.resumeReading()
        entry.expiry = loop.schedule(after: idleSeconds) { [unowned self, unowned entry] in
            evict(entry)
        }
    }

    /// An HTTP/2 connection opened the way `key` says that takes another client connection, or nil.
    func sharedHTTP2(for key: UpstreamPoolKey) -> SharedHTTP2Upstream? {
        shared[key]?.first { $0.takesMore }
    }

    /// Whether an HTTP/2 connection to `host:port` is in the pool (a client asking the right way may share it).
    func hasSharedHTTP2(host: String, port: Int) -> Bool {
        shared.contains { $0.key.host == host && $0.key.port == port }
    }

    /// Offers `connection` to later client connections, unless its origin already has as many as allowed;
    /// whether it did.
    func add(_ connection: SharedHTTP2Upstream) -> Bool {
        guard shared[connection.key, default: []].count < Self.perOrigin else { return false }
        shared[connection.key, default: []].append(connection)
        return true
    }

    /// Withdraws `connection` (it goes away, or stopped taking streams).
    func remove(_ connection: SharedHTTP2Upstream) {
        guard let index = shared[connection.key]?.firstIndex(where: { $0 === connection }) else { return }
        shared[connection.key]?.remove(at: index)
        if shared[connection.key]?.isEmpty == true { shared[connection.key] = nil }
    }

    /// Closes every idle connection, and every shared HTTP/2 one.
    func closeAll() {
        let sharing = shared.values.flatMap { $0 }
        shared.removeAll()
        for connection in sharing { connection.stop() }
        for entries in idle.values {
            for entry in entries {
                entry.expiry?.cancel()
                entry.leg.onEvent = nil
                entry.leg.close()
            }
        }
        idle.removeAll()
        count = 0
    }

    private func evict(_ entry: PooledUpstream) {
        let key = Key(host: entry.host, port: entry.port)
        guard let index = idle[key]?.firstIndex(where: { $0 === entry }) else { return }
        idle[key]?.remove(at: index)
        if idle[key]?.isEmpty == true { idle[key] = nil }
        count -= 1
        entry.expiry?.cancel()
        entry.leg.onEvent = nil
        entry.leg.close()
    }
}
