import Foundation

/// Finds fallbacks in a run's events: a client refused the forged certificate of a host, and the same client
/// reached that host by plain `http://` or through a tunnel the proxy did not intercept. Sans-io: events in,
/// fallbacks out.
///
/// Events arrive in recording order, not in the order things happened: a refusal can be decided after the
/// fallback ended (it may wait a silence window for a sibling connection), so both sides are remembered and
/// compared by when they started. Memory is bounded: past `memoryLimit` entries per table the oldest go.
/// Each client, host and channel is reported once.
package struct FallbackDetector: Sendable {
    private struct Key: Hashable, Sendable {
        let client: String
        let host: String
    }

    private struct Refusal: Sendable {
        let port: Int
        let started: Date
    }

    private struct Access: Sendable {
        let channel: Fallback.Channel
        let request: String
        let connectionID: Int
        let started: Date
    }

    private struct OpenTunnel: Sendable {
        let key: Key
        let port: Int
        let opened: Date
    }

    private struct Reported: Hashable, Sendable {
        let key: Key
        let channel: Fallback.Channel
    }

    /// Entries kept at most in each table.
    package let memoryLimit: Int
    private var refusals: [Key: Refusal] = [:]
    private var latestAccess: [Key: Access] = [:]
    private var openTunnels: [Int: OpenTunnel] = [:]
    private var reported: Set<Reported> = []

    /// A detector keeping at most `memoryLimit` entries per table.
    package init(memoryLimit: Int = 4096) {
        self.memoryLimit = max(1, memoryLimit)
    }

    /// Takes `event`, delivered at `time`; returns the fallbacks it reveals.
    package mutating func observe(_ event: ProxyEvent, at time: Date) -> [Fallback] {
        switch event {
        case .verdict(let record):
            openTunnels.removeValue(forKey: record.connectionID)
            guard record.verdict.kind == .refused else { return [] }
            // By address: the clear-text request that follows has no TLS fingerprint to match.
            return refused(
                Key(client: record.client ?? "unknown", host: Self.normalized(record.host)), port: record.port,
                started: record.startedAt)
        case .proxyProbe(let record, _):
            openTunnels.removeValue(forKey: record.connectionID)
        case .connectionOpened(let id, let host, let port, let peer):
            let key = Key(client: PeerAddress.host(of: peer) ?? "unknown", host: Self.normalized(host))
            Self.insert(OpenTunnel(key: key, port: port, opened: time), at: id, into: &openTunnels, limit: memoryLimit)
            { $0.opened }
        case .clientTLSFailed(let id, _, _, _), .upstreamFailed(let id, _, _, _):
            openTunnels.removeValue(forKey: id)
        case .tunnel(let id, let host, let port, _, _, _, let passedThrough, _):
            guard let tunnel = openTunnels.removeValue(forKey: id) else { return [] }
            let channel: Fallback.Channel = passedThrough ? .passedThroughTunnel : .clearTunnel
            let access = Access(
                channel: channel, request: "CONNECT \(HostName.isIPv6(host) ? "[\(host)]" : host):\(port)",
                connectionID: id, started: tunnel.opened)
            return accessed(tunnel.key, access)
        case .exchange(let record) where record.scheme == "http":
            let key = Key(client: record.client ?? "unknown", host: Self.normalized(record.host))
            let access = Access(
                channel: .plainHTTP, request: "\(record.request.method) \(record.url)",
                connectionID: record.connectionID,
                started: record.started)
            return accessed(key, access)
        default:
            break
        }
        return []
    }

    private mutating func refused(_ key: Key, port: Int, started: Date) -> [Fallback] {
        let standing: Refusal
        if let earlier = refusals[key], earlier.started <= started {
            standing = earlier
        } else {
            standing = Refusal(port: port, started: started)
            Self.insert(standing, at: key, into: &refusals, limit: memoryLimit) { $0.started }
        }
        guard let access = latestAccess[key], access.started >= standing.started else { return [] }
        return report(key, refusal: standing, access: access)
    }

    private mutating func accessed(_ key: Key, _ access: Access) -> [Fallback] {
        if let refusal = refusals[key], access.started >= refusal.started {
            return report(key, refusal: refusal, access: access)
        }
        Self.insert(access, at: key, into: &latestAccess, limit: memoryLimit) { $0.started }
        return []
    }

    private mutating func report(_ key: Key, refusal: Refusal, access: Access) -> [Fallback] {
        guard reported.insert(Reported(key: key, channel: access.channel)).inserted else { return [] }
        if reported.count > 4 * memoryLimit { reported.removeAll() }
        return [
            Fallback(
                client: key.client, host: key.host, refusedPort: refusal.port, channel: access.channel,
                request: access.request, connectionID: access.connectionID, time: access.started)
        ]
    }

    private static func insert<K: Hashable, V>(
        _ value: V, at key: K, into table: inout [K: V], limit: Int, age: (V) -> Date
    ) {
        if table[key] == nil, table.count >= limit, let oldest = table.min(by: { age($0.value) < age($1.value) })?.key {
            table.removeValue(forKey: oldest)
        }
        table[key] = value
    }

    private static func normalized(_ host: String) -> String {
        // Hosts arrive lowercase almost always (every connection passes here): then there is nothing to make.
        var text = host
        let normal = text.withUTF8 { bytes in
            bytes.last != UInt8(ascii: ".")
                && !bytes.contains { $0 >= 0x80 || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }
        }
        if normal { return host }
        let lower = host.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }
}
