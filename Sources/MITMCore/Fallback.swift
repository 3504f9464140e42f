import Foundation

/// A client that, after it refused the proxy's certificate for a host, reached the same host another way
/// the proxy could not check: plain `http://`, or a tunnel relayed untouched. The refusal then protects nothing.
public struct Fallback: Sendable, Equatable, Codable {
    /// How the host was reached again.
    public enum Channel: String, Sendable, Codable {
        /// An absolute-form `http://` request through the proxy: clear text.
        case plainHTTP = "plain-http"
        /// A CONNECT tunnel passed through untouched (`--ignore-hosts`, `--intercept-hosts`): never checked.
        case passedThroughTunnel = "passed-through-tunnel"
        /// A CONNECT tunnel whose bytes were not TLS: clear text inside the tunnel.
        case clearTunnel = "clear-tunnel"
    }

    /// The client address.
    public var client: String
    /// The host refused, then reached.
    public var host: String
    /// The port of the refused HTTPS connection.
    public var refusedPort: Int
    /// How it was reached again.
    public var channel: Channel
    /// The request line of the fallback: `GET http://api.example.com/login`, `CONNECT api.example.com:443`.
    public var request: String
    /// The connection that carried the fallback.
    public var connectionID: Int
    /// When the fallback started.
    public var time: Date

    /// Creates a fallback.
    public init(
        client: String, host: String, refusedPort: Int, channel: Channel, request: String, connectionID: Int, time: Date
    ) {
        self.client = client
        self.host = host
        self.refusedPort = refusedPort
        self.channel = channel
        self.request = request
        self.connectionID = connectionID
        self.time = time
    }

    /// `refused https://api.example.com, then fetched http://api.example.com/login in clear text (client 10.0.0.7)`.
    public var message: String {
        let refused = "refused https://\(host)\(refusedPort == 443 ? "" : ":\(refusedPort)")"
        let target = request.split(separator: " ", maxSplits: 1).last.map(String.init) ?? request
        let then: String
        switch channel {
        case .plainHTTP:
            then = "then fetched \(target) in clear text"
        case .passedThroughTunnel:
            then =
                "then reached \(target) through a tunnel passed through untouched (--ignore-hosts or --intercept-hosts), which nothing checked"
        case .clearTunnel:
            then = "then reached \(target) through a CONNECT tunnel that was not TLS, in clear text"
        }
        return "\(refused), \(then) (client \(client))"
    }
}
