import Foundation

/// An IPv4 or IPv6 address, and the kind of network it belongs to.
public struct IPAddress: Sendable, Equatable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    /// Parses an IP literal (`10.0.0.7`, `fd00::2`, `::ffff:192.168.1.5`); nil for anything else (names, brackets, zones).
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    /// Dotted quad or RFC 5952 text.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.7`, how a dual-stack listener sees IPv4 clients).
    public var unmappedIPv4: IPAddress? {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else {
            return nil
        }
        return IPAddress(bytes: Array(bytes[12...]))
    }

    /// 4 or 16 bytes in network order.
    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The kind of network the address belongs to (an IPv4-mapped address counts as its IPv4 address).
    public var scope: IPAddressScope {
        if let v4 = unmappedIPv4 { return v4.scope }
        return bytes.count == 4 ? Self.scopeOfIPv4(bytes) : Self.scopeOfIPv6(bytes)
    }

    private static func scopeOfIPv4(_ b: [UInt8]) -> IPAddressScope {
        switch (b[0], b[1]) {
        case (127, _): .loopback
        case (10, _), (172, 16...31), (192, 168): .privateNetwork
        case (169, 254): .linkLocal
        case (100, 64...127): .sharedAddressSpace
        case (0, _): .unspecified
        default: .publicInternet
        }
    }

    private static func scopeOfIPv6(_ b: [UInt8]) -> IPAddressScope {
        if b[0..<15].allSatisfy({ $0 == 0 }) {
            return b[15] == 1 ? .loopback : b[15] == 0 ? .unspecified : .publicInternet
        }
        if b[0] & 0xFE == 0xFC { return .privateNetwork }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return .linkLocal }
        return .publicInternet
    }
}

/// Where an address lives, as far as letting it use the proxy goes.
public enum IPAddressScope: String, Sendable, Equatable {
    /// 127.0.0.0/8, ::1: this machine.
    case loopback
    /// RFC 1918 (10/8, 172.16/12, 192.168/16) and RFC 4193 unique local addresses (fc00::/7).
    case privateNetwork = "private"
    /// 169.254/16, fe80::/10.
    case linkLocal = "link-local"
    /// 100.64/10 (RFC 6598), carrier-grade NAT, also used by Tailscale and some hotspots.
    case sharedAddressSpace = "carrier-grade NAT"
    /// 0.0.0.0/8, `::`: not an address a client sends from.
    case unspecified
    /// Anything else: an address the internet can route.
    case publicInternet = "public"
}
