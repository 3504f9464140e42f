/// Who may use the proxy, decided per accepted connection from the client's address alone: on a network address
/// (`--host 0.0.0.0`), only this machine and private networks, unless `--allow-public-clients` (mitmproxy's
/// `block_global`). A proxy that intercepts TLS must never become an open proxy for the internet by accident.
public struct ClientAccessPolicy: Sendable, Equatable {
    /// Who can connect.
    public enum Reach: Sendable, Equatable {
        /// Listening on loopback: only this machine can reach the proxy at all.
        case loopbackOnly
        /// This machine and private, link-local and carrier-grade NAT networks.
        case privateNetworks
        /// Any address (`--allow-public-clients`).
        case anyone
    }

    /// Who can connect.
    public let reach: Reach
    /// The listen address, as given (named in refusals).
    public let listenHost: String

    /// The policy of a proxy listening on `listenHost` (an IP literal).
    public init(listenHost: String, allowPublicClients: Bool) {
        self.listenHost = listenHost
        if IPAddress(listenHost)?.scope == .loopback {
            reach = .loopbackOnly
        } else {
            reach = allowPublicClients ? .anyone : .privateNetworks
        }
    }

    /// The scopes a client address may have on a network listener without `--allow-public-clients`.
    public static let admittedScopes: [IPAddressScope] = [.loopback, .privateNetwork, .linkLocal, .sharedAddressSpace]

    /// Whether a client's address is asked about at all (on loopback, or with `--allow-public-clients`, anyone who can
    /// connect is admitted).
    public var refusesSomeClients: Bool { reach == .privateNetworks }

    /// Why a connection from `client` (an IP literal as the listener read it) is refused; nil to admit it.
    public func refusal(forClient client: String) -> String? {
        guard reach == .privateNetworks else { return nil }
        let scope = IPAddress(client)?.scope
        if let scope, Self.admittedScopes.contains(scope) { return nil }
        let what =
            scope.map { "\(client) is a \($0.rawValue) address" } ?? "\(client) is not an address the proxy can read"
        return "\(what); listening on \(listenHost), the proxy admits only this machine and private networks "
            + "(\(Self.privateRanges)): pass --allow-public-clients to admit anyone (and --proxy-auth USER:PASS to lock it)"
    }

    /// The admitted ranges, in words.
    public static let privateRanges = "10/8, 172.16/12, 192.168/16, 100.64/10, 169.254/16, fc00::/7, fe80::/10"

    /// Who can connect, in words, for the start banner.
    public var summary: String {
        switch reach {
        case .loopbackOnly: "this machine only (listening on loopback)"
        case .privateNetworks:
            "this machine and devices on private networks (\(Self.privateRanges)); other addresses are refused"
        case .anyone: "ANYONE who can reach this machine (--allow-public-clients)"
        }
    }
}
