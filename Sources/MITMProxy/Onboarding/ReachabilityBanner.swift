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
    /// `--advertise`: the address phones type instead of this machine's own.
    public let advertised: AdvertisedAddress?
    /// Whether the proxy runs inside a container, whose own addresses no phone can reach.
    public let inContainer: Bool
    /// This machine's interface addresses.
    public let interfaces: [InterfaceAddress]

    /// The banner of a proxy on `listenHost:port`; `inContainer` and `interfaces` default to this machine's.
    public init(
        listenHost: String, port: Int, access: ClientAccessPolicy, authUser: String?,
        advertised: AdvertisedAddress? = nil,
        inContainer: Bool = ContainerDetection.isInContainer,
        interfaces: [InterfaceAddress] = LocalAddresses.interfaces()
    ) {
        self.listenHost = listenHost
        self.port = port
        self.access = access
        self.authUser = authUser
        self.advertised = advertised
        self.inContainer = inContainer
        self.interfaces = interfaces
    }

    /// A container listening on every interface without `--advertise`: its interface addresses are the container's
    /// own, so the banner names the host's address and the published port instead. An explicit `--host` is listed as given.
    public var pointsToTheContainerHost: Bool {
        advertised == nil && inContainer && access.reach != .loopbackOnly && LocalAddresses.isUnspecified(listenHost)
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
            return [
                usable.first { IPAddress($0.address) == listen }
                    ?? InterfaceAddress(interface: "", address: listenHost, isIPv6: listen.bytes.count == 16)
            ]
        }
        // Private addresses first: the Wi-Fi one a phone shares is almost always among them.
        let isPrivate = { (entry: InterfaceAddress) in IPAddress(entry.address)?.scope == .privateNetwork }
        return usable.filter(isPrivate) + usable.filter { !isPrivate($0) }
    }

    /// `http://ADDRESS:PORT/`: the onboarding page straight from the proxy's address, which a phone can open before its
    /// Wi-Fi proxy is set (and after); nil on loopback.
    public var directOnboardingURL: String? {
        if let advertised { return advertised.onboardingURL }
        if pointsToTheContainerHost { return nil }
        return deviceAddresses.first.map { entry in
            let host = entry.address.contains(":") ? "[\(entry.address)]" : entry.address
            return "http://\(host):\(port)/"
        }
    }

    /// Where a device points its Wi-Fi proxy and opens the onboarding page.
    public var deviceLines: [String] {
        if let advertised {
            return [
                "On a phone on the same network, set the Wi-Fi proxy to Manual:",
                "  server \(advertised.host)  port \(advertised.port)   (--advertise)",
                "then open http://\(LocalPages.host)/ on it to install the CA (or \(advertised.onboardingURL) before the proxy is set)",
            ]
        }
        if pointsToTheContainerHost {
            return [
                "Running in a container: its own addresses are not ones a phone can reach.",
                "On a phone on the same network, set the Wi-Fi proxy to Manual: server = the address of the computer running the "
                    + "container, port = the host port published for port \(port) (e.g. -p 8888:\(port))",
                "then open http://\(LocalPages.host)/ on it to install the CA; --advertise HOST:PORT prints that address here, with a QR code",
            ]
        }
        var lines: [String] = []
        let addresses = deviceAddresses
        if addresses.isEmpty {
            lines.append("Devices behind the proxy can download it from http://\(LocalPages.host)/")
        } else {
            lines.append("On a phone on the same network, set the Wi-Fi proxy to Manual:")
            let width = addresses.map(\.address.count).max() ?? 0
            for entry in addresses {
                let padded = entry.address.padding(toLength: width, withPad: " ", startingAt: 0)
                lines.append(
                    "  server \(padded)  port \(port)\(entry.interface.isEmpty ? "" : "   (\(entry.interface))")")
            }
            lines.append(
                "then open http://\(LocalPages.host)/ on it to install the CA (or \(directOnboardingURL ?? "") before the proxy is set)"
            )
            let outside = addresses.filter { access.refusal(forClient: $0.address) != nil }.map(\.address)
            if !outside.isEmpty {
                lines.append(
                    "note: \(outside.joined(separator: ", ")) \(outside.count == 1 ? "is not a private address" : "are not private addresses"): "
                        + "devices on \(outside.count == 1 ? "that network" : "those networks") are refused unless --allow-public-clients"
                )
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
            lines.append(
                "Proxy authentication: off"
                    + (access.reach == .loopbackOnly ? "" : " (--proxy-auth USER:PASSWORD to require it)"))
        }
        return lines
    }
}
