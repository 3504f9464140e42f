#if canImport(Glibc)
import Glibc
#endif

/// The addresses that reach this machine: loopback, the unspecified address (which Linux connects to
/// the local host) and every interface's address.
public enum LocalAddresses {
    /// Whether connecting to `host` (an IP literal) reaches this machine.
    public static func contains(_ host: String) -> Bool {
        let text = host.lowercased()
        if text.hasPrefix("127.") || text.hasPrefix("::ffff:127.") || text == "::1" || isUnspecified(text) { return true }
        return interfaceAddresses().contains(text)
    }

    /// Whether `host` is `0.0.0.0` or `::` (a listener on every interface).
    public static func isUnspecified(_ host: String) -> Bool {
        host == "0.0.0.0" || host == "::" || host == "::ffff:0.0.0.0"
    }

    /// Every interface's address (loopback included), as numeric text.
    public static func interfaceAddresses() -> Set<String> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        var found = Set<String>()
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            if let address = entry.pointee.ifa_addr {
                let family = Int32(address.pointee.sa_family)
                let length = family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
                if family == AF_INET || family == AF_INET6 {
                    var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                    if getnameinfo(address, socklen_t(length), &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                        found.insert(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased())
                    }
                }
            }
            cursor = entry.pointee.ifa_next
        }
        return found
    }
}
