import MITMIO
import Synchronization

/// The proxy's own listening endpoints (its port and its `--reverse` ports), so that a tunnel or request to one is
/// refused (or served locally) instead of looping through the proxy, each turn taking two more descriptors.
final class OwnListener: Sendable {
    private let endpoints = Mutex<[(host: String, port: Int)]>([])

    /// Records where the proxy listens, once bound.
    func set(host: String, port: Int) { endpoints.withLock { $0.append((host, port)) } }

    /// Whether `host:port` (an IP literal, `localhost`, or a resolved address) is one of the proxy's own listening sockets.
    func isOwn(host: String, port: Int) -> Bool {
        endpoints.withLock { $0 }.contains {
            isEndpoint(host: host, port: port, listenHost: $0.host, listenPort: $0.port)
        }
    }

    private func isEndpoint(host: String, port: Int, listenHost: String, listenPort: Int) -> Bool {
        guard port == listenPort else { return false }
        var address = host.lowercased()
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        if NameResolver.isLocalhostName(address) { address = "127.0.0.1" }
        guard SocketAddress.numeric(host: address, port: port) != nil else { return false }
        if address == listenHost || LocalAddresses.isUnspecified(address) { return true }
        return LocalAddresses.isUnspecified(listenHost) && LocalAddresses.contains(address)
    }

    /// The proxy's own port (the first endpoint set), where the web UI sends its replays.
    var proxyEndpoint: (host: String, port: Int)? { endpoints.withLock { $0.first } }

    /// The text for a refusal.
    static func loopReason(host: String, port: Int) -> String {
        "\(host):\(port) is this proxy's own address: a request to it would loop through the proxy; send it to the real server"
    }
}
