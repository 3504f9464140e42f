import MITMCore
import MITMIO

/// Who may reach local targets: a client on another machine may not reach this machine's own services through the proxy
/// (unless `--allow-local-targets`). The client's address decides whether it is guarded (`guardedClient`); the addresses
/// actually dialled for a guarded client are checked (`LocalTargetGuard`: by `UpstreamConnector`, and for a pooled
/// connection in `ProxyConnection.openTunnel`); a guarded client never shares a pooled HTTP/2 connection, and a CONNECT
/// from it is answered only once its target is known to be allowed (`ConnectionLife`'s `awaitingTarget`).
extension ProxyContext {
    /// Whether a client at `address` (an IP address) is kept from this machine's own addresses: every client not on
    /// loopback (one whose address cannot be read included), unless `--allow-local-targets`. A captured client command
    /// runs on this machine, in a namespace of its own: it is this machine's.
    func refusesLocalTargets(forClient address: String?) -> Bool {
        // The usual client, this machine over IPv4, is known by its text without parsing it (asked once per connection).
        !configuration.allowLocalTargets && address != "127.0.0.1" && IPAddress(address ?? "")?.scope != .loopback
            && !LocalTargetGuard.isThisMachine(address ?? "") && !isCapturedClient(address)
    }

    /// The address to name in a refusal when a client at `address` may not reach this machine (`refusesLocalTargets`);
    /// nil when it may.
    func guardedClient(forClient address: String?) -> String? {
        refusesLocalTargets(forClient: address) ? address ?? "unknown" : nil
    }
}

/// The check behind `refusesLocalTargets`, made on the addresses actually dialled (after DNS and `--resolve`), so that
/// no name, short form (`127.1`) or rebinding trick reaches this machine's services.
enum LocalTargetGuard {
    /// Whether `address` (as a resolver or socket spells it) is this machine: loopback, unspecified, or an interface's.
    static func isThisMachine(_ address: String) -> Bool {
        let plain = IPAddress(address)?.unmappedIPv4?.description ?? address
        return LocalAddresses.contains(plain)
    }

    /// The `403` text for a client refused `host:port`, which reaches this machine at `address`.
    static func reason(host: String, port: Int, address: String, client: String?) -> String {
        let target = host == address ? "\(address)" : "\(host) (\(address))"
        return
            "\(target) port \(port) is on the proxy's own machine, and a client on another machine (\(client ?? "unknown")) may not "
            + "reach this machine's services through the proxy; start the proxy with --allow-local-targets to allow it"
    }
}
