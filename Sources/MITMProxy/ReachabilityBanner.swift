import MITMCore
import MITMIO

/// What the start banner says about reaching the proxy: the addresses and port to type into a phone, the onboarding
/// page, who may connect and whether credentials are needed.
@_spi(CommandLine) public struct ReachabilityBanner: Sendable {
    /// The listen address, as configured (`0.0.0.0`, `::`, `192.168.1.23`, `127.0.0.1`).
    public let listenHost: String
    /// The bound port.
    public let port: Int
    /// Who may connect.
    public let access: ClientAccessPolicy
    /// The `--proxy-auth` user, when credentials are required.
    public let authUser: String?
    /// This machine's interface addresses.
    public let interfaces: [InterfaceAddress]

    /// The banner of a proxy on `listenHost:port`; `interfaces` defaults to this machine's.
    public init(listenHost: String, port: Int, access: ClientAccessPolicy, authUser: String?,
                interfaces: [InterfaceAddress] = LocalAddresses.interfaces()) {
        self.listenHost = listenHost
        self.port = port
        self.access = access
        self.authUser = authUser
        self.interfaces = interfaces
    }

    /// The addresses another device can reach the proxy at: none on loopback; the given one; for `0.0.0.0` every IPv4
    /// interface address, for `::` every address (without loopback, and without link-local IPv6, which needs a zone).
    public var deviceAddresses: [InterfaceAddress] {
        guard access.reach != .loopbackOnly, let listen = IPAddress(listenHost) else { return [] }
        let usable = interfaces.filter { entry in
            guard !entry.address.contains("%"), let address = IPAddress(entry.address) else { return false }
            return address.scope != .loopback && (listen.bytes.count == 16 || !entry.isIPv6)
        }
        guard listen.scope == .unspecified else {
            return [usable.first { IPAddress($0.address) == listen } ?? InterfaceAddress(interface: "", address: listenHost, isIPv6: listen.bytes.count == 16)]
        }
        // Private addresses first: the Wi-Fi one a phone shares is almost always among them.
        let isPrivate = { (entry: InterfaceAddress) in IPAddress(entry.address)?.scope == .privateNetwork }
        return usable.filter(isPrivate) + usable.filter { !isPrivate($0) }
    }

    /// `http://ADDRESS:PORT/`: the onboarding page straight from the proxy's address, which a phone can open before its
    /// Wi-Fi proxy is set (and after); nil on loopback.
    public var directOnboardingURL: String? {
        deviceAddresses.first.map { entry in
            let host = entry.address.contains(":") ? "[\(entry.address)]" : entry.address
            return "http://\(host):\(port)/"
        }
    }

    /// Where a device points its Wi-Fi proxy and opens the onboarding page.
    public var deviceLines: [String] {
        var lines: [String] = []
        let addresses = deviceAddresses
        if addresses.isEmpty {
            lines.append("Devices behind the proxy can download it from http://\(LocalPages.host)/")
        } else {
            lines.append("On a phone on the same network, set the Wi-Fi proxy to Manual:")
            let width = addresses.map(\.address.count).max() ?? 0
            for entry in addresses {
                let padded = entry.address.padding(toLength: width, withPad: " ", startingAt: 0)
                lines.append("  server \(padded)  port \(port)\(entry.interface.isEmpty ? "" : "   (\(entry.interface))")")
            }
            lines.append("then open http://\(LocalPages.host)/ on it to install the CA (or \(directOnboardingURL ?? "") before the proxy is set)")
            let outside = addresses.filter { access.refusal(forClient: $0.address) != nil }.map(\.address)
            if !outside.isEmpty {
                lines.append("note: \(outside.joined(separator: ", ")) \(outside.count == 1 ? "is not a private address" : "are not private addresses"): "
                    + "devices on \(outside.count == 1 ? "that network" : "those networks") are refused unless --allow-public-clients")
            }
        }
        return lines
    }

    /// Who may connect, and whether credentials are needed.
    public var accessLines: [String] {
        var lines = ["Who can connect: \(access.summary)"]
        if let authUser {
            lines.append("Proxy authentication: required (user \(authUser))")
        } else {
            lines.append("Proxy authentication: off" + (access.reach == .loopbackOnly ? "" : " (--proxy-auth USER:PASSWORD to require it)"))
        }
        return lines
    }
}
