import MITMTLS

/// Fetches the certificate chain a live TLS server presents, without verifying it.
public struct LiveChainRequest: Sendable, Equatable {
    /// The server to connect to.
    public var target: HostAndPort
    /// The SNI name to send; nil sends the target's host name (and nothing for an IP literal).
    public var serverName: String?
    /// An HTTP proxy to tunnel through with `CONNECT`, or nil to connect directly.
    public var proxy: HostAndPort?
    /// Seconds allowed for connecting, tunnelling and the handshake together.
    public var timeoutSeconds: Double

    /// A request for `target`'s chain.
    public init(target: HostAndPort, serverName: String? = nil, proxy: HostAndPort? = nil, timeoutSeconds: Double = 10)
    {
        self.target = target
        self.serverName = serverName
        self.proxy = proxy
        self.timeoutSeconds = timeoutSeconds
    }

    /// The SNI name that will be sent, if any.
    public var effectiveServerName: String? {
        serverName ?? (target.isIPAddress ? nil : target.host)
    }

    /// `host:port (SNI name) via proxy`, for reports.
    public var sourceDescription: String {
        var text = target.description
        if let name = effectiveServerName, name != target.host { text += " (SNI \(name))" }
        if effectiveServerName == nil { text += " (no SNI)" }
        if let proxy { text += " via proxy \(proxy)" }
        return text
    }

    /// Connects, tunnels when a proxy is set, runs the TLS handshake and returns the chain, leaf first.
    public func fetch() throws(PinsError) -> [X509Certificate] {
        let deadline = Deadline(seconds: timeoutSeconds)
        if let proxy {
            let socket = try TCPClientSocket.connect(to: proxy, role: "proxy ", deadline: deadline)
            let pending = try ProxyTunnel.open(through: socket, to: target)
            socket.name = "\(target) via proxy \(proxy)"
            return try TLSChainClient.handshake(on: socket, serverName: effectiveServerName, pending: pending)
        }
        let socket = try TCPClientSocket.connect(to: target, deadline: deadline)
        return try TLSChainClient.handshake(on: socket, serverName: effectiveServerName, pending: [])
    }
}
