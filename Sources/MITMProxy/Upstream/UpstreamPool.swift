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
    /// When it was parked, in monotonic nanoseconds: it expires the pool's idle time later.
    fileprivate var parkedAt: UInt64 = 0

    init(
        leg: TLSLeg, host: String, port: Int, serverName: String?, certificate: X509Certificate?, address: String,
        offeredALPN: [String]
    ) {
        self.leg = leg
        self.host = host
        self.port = port
        self.serverName = serverName
        self.certificate = certificate
        self.address = address
        self.offeredALPN = offeredALPN
    }
}

/// What makes two upstream connections interchangeable: a client connection may use a pooled one only if it
/// would have opened the same. The verification of upstream certificates is part of it although one proxy
/// applies the same to every upstream; the certificate profile is not: it only changes what the client is shown.
struct UpstreamPoolKey: Hashable {
    /// The CONNECT host and port. Idle HTTP/1 connections are kept by origin alone, and the one taken must have been
    /// opened the way the client asks (its SNI and ALPN offer: see `UpstreamPool.take`).
    struct Origin: Hashable {
        let host: String
        let port: Int
    }

    let origin: Origin
    /// The SNI sent (nil for an IP address).
    let serverName: String?
    /// The protocol the upstream chose (`h2`).
    let alpn: String
    /// Whether the upstream's certificate was verified.
    let verifiesCertificate: Bool
}

/// Idle upstream connections of one loop, by origin, bounded in number and idle time; and the loop's HTTP/2
/// upstream connections, which client connections share while they have room for more streams.
/// Confined to its loop.
// @unchecked Sendable: touched only on its loop's queue; expiry timers fire there.
final class UpstreamPool: @unchecked Sendable {
    private let loop: EventLoop
    private let clock: ProxyClock
    /// How long an unused connection is kept.
    let idleTime: Duration
    private var shared: [UpstreamPoolKey: [SharedHTTP2Upstream]] = [:]
    private var idle: [UpstreamPoolKey.Origin: [PooledUpstream]] = [:]
    private var count = 0
    private var forgeNames = ForgeNamesMemo()
    /// Due when the longest-parked idle connection expires: one timer for the pool, as one per parked connection
    /// cost three allocations and a timer-heap insertion per request.
    private var expiryTimer: (any ClockTimer)?
    private static let perOrigin = 16
    private static let total = 256

    init(loop: EventLoop, idleTime: Duration, clock: ProxyClock) {
        self.loop = loop
        self.clock = clock
        self.idleTime = idleTime
    }

    /// The names a leaf forged for `primary` carries, given the upstream's certificate (remembered per certificate:
    /// see `ForgeNamesMemo`).
    func forgedNames(primary: String, upstream: X509Certificate?) -> [SubjectAlternativeName] {
        forgeNames.names(primary: primary, upstream: upstream)
    }

    /// Idle connections closed so far because nobody took them in time.
    private(set) var expiredCount = 0

    /// An idle connection to `host:port` (the newest that `usable` accepts), removed from the pool, or nil.
    func take(host: String, port: Int, where usable: (PooledUpstream) -> Bool = { _ in true }) -> PooledUpstream? {
        let key = UpstreamPoolKey.Origin(host: host, port: port)
        guard let index = idle[key]?.lastIndex(where: usable) else { return nil }
        return remove(at: index, of: key)
    }

    /// Takes the entry at `index` of `key`'s idle list out of the pool, and stops listening to it. Removed in place: a
    /// copy of the list taken out of the dictionary would make the removal copy it again.
    private func remove(at index: Int, of key: UpstreamPoolKey.Origin) -> PooledUpstream? {
        guard let entry = idle[key]?.remove(at: index) else { return nil }
        if idle[key]?.isEmpty == true { idle[key] = nil }
        count -= 1
        entry.leg.onEvent = nil
        return entry
    }

    /// Keeps `entry` until it expires, its server closes it, or it is taken.
    func park(_ entry: PooledUpstream) {
        let key = UpstreamPoolKey.Origin(host: entry.host, port: entry.port)
        guard idleTime > .zero, count < Self.total, idle[key, default: []].count < Self.perOrigin else {
            entry.leg.close()
            return
        }
        entry.parkedAt = clock.now()
        idle[key, default: []].append(entry)
        count += 1
        if expiryTimer == nil { armExpiry(oldestParkedAt: entry.parkedAt) }
        entry.leg.compactIdleMemory()
        entry.leg.onEvent = { [unowned self, unowned entry] event in
            // Anything from an idle server (a close, an unsolicited byte) makes the connection unusable.
            if case .drained = event { return }
            evict(entry)
        }
        entry.leg.resumeReading()
    }

    private func armExpiry(oldestParkedAt: UInt64) {
        let due = ProxyClock.deadline(idleTime, after: oldestParkedAt)
        // Held strongly: the pool goes with its context, maybe on another thread; it lives on until its last idle
        // connection expires, or `closeAll` cancels the timer.
        expiryTimer = clock.schedule(at: due, on: loop) { [self] in expireIdle() }
    }

    /// Closes the idle connections whose time is up, and waits for the next to expire.
    private func expireIdle() {
        expiryTimer = nil
        let now = clock.now()
        var expired: [PooledUpstream] = []
        var oldest = UInt64.max
        for entries in idle.values {
            for entry in entries {
                if ProxyClock.deadline(idleTime, after: entry.parkedAt) <= now {
                    expired.append(entry)
                } else {
                    oldest = min(oldest, entry.parkedAt)
                }
            }
        }
        for entry in expired { evict(entry) }
        expiredCount += expired.count
        if oldest != .max { armExpiry(oldestParkedAt: oldest) }
    }

    /// An HTTP/2 connection opened the way `key` says that takes another client connection, or nil.
    func sharedHTTP2(for key: UpstreamPoolKey) -> SharedHTTP2Upstream? {
        shared[key]?.first { $0.takesMore }
    }

    /// Whether an HTTP/2 connection to `host:port` is in the pool (a client asking the right way may share it).
    func hasSharedHTTP2(host: String, port: Int) -> Bool {
        shared.keys.contains { $0.origin == UpstreamPoolKey.Origin(host: host, port: port) }
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
        expiryTimer?.cancel()
        expiryTimer = nil
        for entries in idle.values {
            for entry in entries {
                entry.leg.onEvent = nil
                entry.leg.close()
            }
        }
        idle.removeAll()
        count = 0
    }

    private func evict(_ entry: PooledUpstream) {
        let key = UpstreamPoolKey.Origin(host: entry.host, port: entry.port)
        guard let index = idle[key]?.firstIndex(where: { $0 === entry }) else { return }
        remove(at: index, of: key)?.leg.close()
    }
}
