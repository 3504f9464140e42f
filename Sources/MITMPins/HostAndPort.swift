import MITMTLS

/// A `host[:port]` argument: a name, an IPv4 literal, or an IPv6 literal (bracketed with a port).
public struct HostAndPort: Sendable, Equatable, CustomStringConvertible {
    /// The host name or IP literal, without brackets.
    public let host: String
    /// The TCP port.
    public let port: Int

    /// A host and port as given.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal; `defaultPort` when none.
    public init(parsing text: String, defaultPort: Int = 443) throws(PinsError) {
        var host = Substring(text)
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else {
                throw PinsError("\(text): missing ] after the IPv6 address")
            }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw PinsError("\(text): expected :port after ]") }
                portText = rest.dropFirst()
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw PinsError("\(text): no host name") }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (1...65_535).contains(number) else {
                throw PinsError("\(text): the port must be a number from 1 to 65535")
            }
            port = number
        }
        self.init(host: String(host), port: port)
    }

    /// Whether the host is an IP literal (which TLS does not send as SNI).
    public var isIPAddress: Bool { IPAddressText.parse(host) != nil }

    /// `host:port`, or `[v6]:port`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
