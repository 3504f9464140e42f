import Foundation
import MITMCore

/// A CONNECT tunnel from the moment the proxy answers it: its target and its first bytes (how far reaching its upstream
/// has got is the connection's life's: `ConnectionLife.UpstreamProgress`).
final class Tunnel {
    let host: String
    let port: Int
    /// Set when the tunnel checks the proxy itself rather than carrying the app's traffic.
    let probe: ProxyProbe?
    /// The client's first bytes, kept until they are known to be a ClientHello or something else.
    var peeked: [UInt8] = []
    /// The policy passed this TLS tunnel through untouched (host lists, the `passthrough` profile).
    var passedThrough = false
    /// Watches an upstream that speaks first (SMTP, FTP) while the client says nothing.
    var serverFirstWatcher: ServerFirstWatcher?
    /// The QA rule that answers every request to the host itself: the upstream is not dialled unless needed.
    var answeredByRule: String?

    /// How the client asked for it.
    let request: TunnelRequest
    /// When the proxy accepted it (the CONNECT, or the connection a transparent or reverse tunnel came on).
    let started: Date

    init(host: String, port: Int, probe: ProxyProbe?, request: TunnelRequest = .httpConnect, started: Date) {
        self.host = host
        self.port = port
        self.probe = probe
        self.request = request
        self.started = started
    }

    /// Hands the bytes read so far to whoever reads the tunnel next.
    func takePeeked() -> [UInt8] {
        defer { peeked = [] }
        return peeked
    }
}

/// How a client asks for a tunnel.
enum TunnelRequest {
    /// `CONNECT host:port HTTP/1.1`.
    case httpConnect
    /// A SOCKS5 CONNECT (on the same port: the first byte tells).
    case socks5
    /// A connection to a `--reverse` port: the tunnel to its origin is implied, and TLS starts at once.
    case reverse
    /// A connection the system redirected to the transparent listener: the tunnel to its original destination is
    /// implied, and the client speaks at once.
    case transparent
}
