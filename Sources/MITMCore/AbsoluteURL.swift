/// An `http` or `https` URL from an absolute-form request-target, already validated and normalized.
public struct AbsoluteURL: Sendable, Equatable {
    /// `http` or `https`, lowercase.
    public var scheme: String
    /// The host as `HostName.validate` returns it: lowercase, IPv6 without brackets.
    public var host: String
    /// The explicit port, or the scheme's default.
    public var port: Int
    /// The path and query, starting with `/` (just `/` when the URL had none).
    public var pathAndQuery: String

    /// A URL from parts that are already valid and normalized.
    public init(scheme: String, host: String, port: Int, pathAndQuery: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
    }

    /// 443 for `https`, 80 otherwise.
    public static func defaultPort(forScheme scheme: String) -> Int {
        scheme == "https" ? 443 : 80
    }

    /// The value for a Host header: the host (IPv6 in brackets), then `:port` unless it is the scheme's default.
    public var authority: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return port == Self.defaultPort(forScheme: scheme) ? hostPart : "\(hostPart):\(port)"
    }

    /// `https://host[:port]/path`.
    public var text: String { "\(scheme)://\(authority)\(pathAndQuery)" }
}
