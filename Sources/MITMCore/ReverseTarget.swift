/// An origin the proxy stands in front of as a TLS server (`--reverse [LOCALPORT=]https://HOST[:PORT]`), for clients
/// that cannot be given a proxy but can be given a base URL or a hosts-file entry.
public struct ReverseTarget: Sendable, Equatable {
    /// The origin's host (a validated name or an IP address) and port.
    public let host: String
    public let port: Int
    /// The local port clients connect to (0: a free one, printed at start).
    public let listenPort: Int

    /// Parses `[LOCALPORT=]https://HOST[:PORT][/]`.
    public init(parsing text: String) throws(ReverseTargetError) {
        var rest = Substring(text)
        var listenPort = 0
        if let equals = rest.firstIndex(of: "="), let port = Int(rest[..<equals]) {
            guard (0...65_535).contains(port) else {
                throw ReverseTargetError("local port \(port) is not a port number (0-65535)")
            }
            listenPort = port
            rest = rest[rest.index(after: equals)...]
        }
        guard case .absolute(let origin)? = try? RequestTarget.parse(String(rest), method: "GET") else {
            throw ReverseTargetError("\(rest) is not an https:// URL naming a host (and a port)")
        }
        guard origin.scheme == "https" else {
            throw ReverseTargetError(
                "\(rest) is not an https:// URL (the proxy is a TLS server in front of an HTTPS origin)")
        }
        guard origin.pathAndQuery == "/" else {
            throw ReverseTargetError("\(rest): give the origin only (scheme, host and port), without path or query")
        }
        self.host = origin.host
        self.port = origin.port
        self.listenPort = listenPort
    }

    /// `https://HOST[:PORT]` (the port left out when it is 443).
    public var url: String { "https://\(authority)" }

    /// What the origin expects in `Host` and `:authority`.
    public var authority: String { AbsoluteURL(scheme: "https", host: host, port: port, pathAndQuery: "/").authority }
}

/// Why a `--reverse` value is not usable.
public struct ReverseTargetError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
