import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The addresses that reach this machine: loopback, the unspecified address (which Linux connects to
/// the local host) and every interface's address.
public enum LocalAddresses {
    /// Whether connecting to `host` (an IP literal) reaches this machine.
    public static func contains(_ host: String) -> Bool {
        let text = host.lowercased()
        if text.hasPrefix("127.") || text.hasPrefix("::ffff:127.") || text == "::1" || isUnspecified(text) {
            return true
        }
        return interfaceAddresses().contains(text)
    }

    /// Whether `host` is `0.0.0.0` or `::` (a listener on every interface).
    public static func isUnspecified(_ host: String) -> Bool {
        host == "0.0.0.0" || host == "::" || host == "::ffff:0.0.0.0"
    }

    /// The interface addresses, read again at most once a second: the check runs on the loops for every upstream a
    /// client on another machine asks for, and reading them costs a netlink round trip (about 0.1 ms).
    private static func interfaceAddresses() -> Set<String> {
        let now = ContinuousClock.now
        return recentInterfaceAddresses.withLock { cached in
            if let last = cached, last.read.duration(to: now) < .seconds(1) { return last.addresses }
            let addresses = Set(interfaces().map { $0.address.lowercased() })
            cached = (now, addresses)
            return addresses
        }
    }

    private static let recentInterfaceAddresses = Mutex<(read: ContinuousClock.Instant, addresses: Set<String>)?>(nil)

    /// Every IPv4 and IPv6 address of this machine's interfaces, loopback included, in the system's order
    /// (link-local IPv6 addresses carry their zone: `fe80::1%eth0`).
    public static func interfaces() -> [InterfaceAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        var found: [InterfaceAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            guard let address = entry.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(length), &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0
            else { continue }
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            found.append(
                InterfaceAddress(
                    interface: String(cString: entry.pointee.ifa_name), address: text, isIPv6: family == AF_INET6))
        }
        return found
    }
}

/// One address of a network interface.
public struct InterfaceAddress: Sendable, Equatable {
    /// The interface's name (`eth0`, `wlan0`).
    public let interface: String
    /// The address as text.
    public let address: String
    /// Whether it is an IPv6 address.
    public let isIPv6: Bool

    /// `address` of `interface`.
    public init(interface: String, address: String, isIPv6: Bool) {
        self.interface = interface
        self.address = address
        self.isIPv6 = isIPv6
    }
}
