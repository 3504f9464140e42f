import MITMIO
import Synchronization

/// The proxy's own listening endpoint, so that a tunnel or request to it is refused (or served locally)
/// instead of looping through the proxy, each turn taking two more descriptors.
final class OwnListener: Sendable {
    private let endpoint = Mutex<(host: String, port: Int)?>(nil)

    /// Records where the proxy listens, once bound.
    func set(host: String, port: Int) { endpoint.withLock { $0 = (host, port) } }

    /// Whether `host:port` (an IP literal, `localhost`, or a resolved address) is the proxy's own listening socket.
    func isOwn(host: String, port: Int) -> Bool {
        guard let (listenHost, listenPort) = endpoint.withLock({ $0 }), port == listenPort else { return false }
        var address = host.lowercased()
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        if NameResolver.isLocalhostName(address) { address = "127.0.0.1" }
        guard SocketAddress.numeric(host: address, port: port) != nil else { return false }
        if address == listenHost || LocalAddresses.isUnspecified(address) { return true }
        return LocalAddresses.isUnspecified(listenHost) && LocalAddresses.contains(address)
    }

    /// The text for a refusal.
    static func loopReason(host: String, port: Int) -> String {
        "\(host):\(port) is this proxy's own address: a request to it would loop through the proxy; send it to the real server"
    }
}
