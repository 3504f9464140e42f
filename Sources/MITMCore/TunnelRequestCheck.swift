/// Whether a request inside an intercepted tunnel may go to the tunnel's host: a request goes where
/// its tunnel goes, so a request that names another place is refused, never forwarded there under a name it did not
/// go to (and recorded as somewhere else).
///
/// - `421 Misdirected Request` for a request for another host or port: what HTTP/2 connection coalescing sends (a
///   browser reusing one connection for every name the certificate covers), and what such a client retries on a new
///   connection (RFC 9110 §15.5.20, RFC 9113 §9.1.1);
/// - `400` for a malformed one: userinfo in `:authority`, a `Host` that differs from `:authority` (RFC 9113 §8.3.1),
///   an HTTP/1.1 request without exactly one `Host` (RFC 9112 §3.2), a CONNECT inside the tunnel.
package enum TunnelRequestCheck {
    /// Why the request cannot go through the tunnel.
    package struct Refusal: Sendable, Equatable, Error {
        /// 400 or 421.
        package let status: Int
        /// In words, naming the request's target and the tunnel.
        package let reason: String
    }

    /// Checks `head` (HTTP/1, or an HTTP/2 request with its `:authority`) inside a tunnel to `host`:`port`.
    package static func check(_ head: HTTPRequestHead, authority: String? = nil, tunnelHost host: String, port: Int) -> Refusal? {
        // Runs for every request: nothing is built unless the request is refused.
        let originForm = head.target.utf8.first == UInt8(ascii: "/")
        var tunnel: String { "the tunnel to \(host):\(port)" }
        if head.method == "CONNECT", head.version != .http2 || !originForm {
            return Refusal(status: 400, reason: "a CONNECT inside \(tunnel) is not relayed")
        }
        if head.version == .http2 {
            guard let authority else { return nil }
            let hosts = head.headers.values("host")
            if authority.contains("@") {
                return Refusal(status: 400, reason: "the :authority \(HTTPSyntax.quoted(authority)) carries userinfo, which HTTP/2 forbids")
            }
            if let other = hosts.first(where: { !sameAuthority($0, authority, defaultPort: port) }) {
                return Refusal(status: 400, reason: "the Host \(HTTPSyntax.quoted(other)) differs from the :authority \(HTTPSyntax.quoted(authority))")
            }
            return misdirected(authority, shown: authority, tunnelHost: host, port: port, tunnel: tunnel)
        }
        if head.version == .http1_1, case let hosts = head.headers.count(named: "host"), hosts != 1 {
            return Refusal(status: 400, reason: hosts == 0 ? "an HTTP/1.1 request without Host" : "an HTTP/1.1 request with \(hosts) Host fields")
        }
        guard !originForm, head.target.contains("://"), case .absolute(let url)? = try? RequestTarget.parse(head.target, method: head.method) else { return nil }
        // A URL without a port names its scheme's default, which a tunnel to another port still serves.
        let bracketed = url.host.contains(":") ? "[\(url.host)]" : url.host
        let named = url.port == AbsoluteURL.defaultPort(forScheme: url.scheme) ? "\(bracketed):\(port)" : url.authority
        return misdirected(named, shown: url.authority, tunnelHost: host, port: port, tunnel: tunnel)
    }

    /// `authority` as compared (a missing port is the tunnel's), `shown` as the client wrote it.
    private static func misdirected(_ authority: String, shown: String, tunnelHost host: String, port: Int, tunnel: String) -> Refusal? {
        guard !sameAuthority(authority, host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)", defaultPort: port) else { return nil }
        return Refusal(status: 421, reason: "the request is for \(HTTPSyntax.quoted(shown)), not for \(tunnel): open a connection to it")
    }

    /// Whether two `host[:port]` texts name one place (names compared in normal form; a missing port is `defaultPort`).
    private static func sameAuthority(_ left: String, _ right: String, defaultPort: Int) -> Bool {
        guard let one = try? RequestTarget.parseAuthority(left, defaultPort: defaultPort),
              let other = try? RequestTarget.parseAuthority(right, defaultPort: defaultPort) else { return false }
        return one.host == other.host && one.port == other.port
    }
}
