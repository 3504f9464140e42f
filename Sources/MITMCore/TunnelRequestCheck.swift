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
    package static func check(_ head: HTTPRequestHead, authority: String? = nil, tunnelHost host: String, port: Int)
        -> Refusal?
    {
        // Runs for every request: nothing is built and nothing parsed unless the request names another place.
        let originForm = head.target.utf8.first == UInt8(ascii: "/")
        if head.method == "CONNECT", head.version != .http2 || !originForm {
            return Refusal(status: 400, reason: "a CONNECT inside \(tunnel(host, port)) is not relayed")
        }
        if head.version == .http2 {
            guard let authority else { return nil }
            if carriesUserinfo(authority) {
                return Refusal(
                    status: 400,
                    reason: "the :authority \(HTTPSyntax.quoted(authority)) carries userinfo, which HTTP/2 forbids")
            }
            // One pass, no list: most HTTP/2 requests' Host is the one made from `:authority` (the same string).
            if let other = head.headers.fields.first(where: {
                HTTPSyntax.equalsIgnoringASCIICase($0.name, "host") && $0.value != authority
                    && !sameAuthority($0.value, authority, defaultPort: port)
            })?.value {
                return Refusal(
                    status: 400,
                    reason:
                        "the Host \(HTTPSyntax.quoted(other)) differs from the :authority \(HTTPSyntax.quoted(authority))"
                )
            }
            return misdirected(authority, shown: authority, tunnelHost: host, port: port)
        }
        if head.version == .http1_1, case let hosts = head.headers.count(named: "host"), hosts != 1 {
            return Refusal(
                status: 400,
                reason: hosts == 0
                    ? "an HTTP/1.1 request without Host" : "an HTTP/1.1 request with \(hosts) Host fields")
        }
        guard !originForm, head.target.contains("://"),
            case .absolute(let url)? = try? RequestTarget.parse(head.target, method: head.method)
        else { return nil }
        // A URL without a port names its scheme's default, which a tunnel to another port still serves.
        let bracketed = url.host.utf8.contains(UInt8(ascii: ":")) ? "[\(url.host)]" : url.host
        let named = url.port == AbsoluteURL.defaultPort(forScheme: url.scheme) ? "\(bracketed):\(port)" : url.authority
        return misdirected(named, shown: url.authority, tunnelHost: host, port: port)
    }

    private static func tunnel(_ host: String, _ port: Int) -> String { "the tunnel to \(host):\(port)" }

    /// `authority` as compared (a missing port is the tunnel's), `shown` as the client wrote it.
    private static func misdirected(_ authority: String, shown: String, tunnelHost host: String, port: Int) -> Refusal?
    {
        if isVerbatim(authority, host: host, port: port) { return nil }
        let tunnelAuthority = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard !sameAuthority(authority, tunnelAuthority, defaultPort: port) else { return nil }
        return Refusal(
            status: 421,
            reason:
                "the request is for \(HTTPSyntax.quoted(shown)), not for \(tunnel(host, port)): open a connection to it"
        )
    }

    /// Whether `authority` is the tunnel's own text, `host` or `host:port`: the same place, known without parsing.
    private static func isVerbatim(_ authority: String, host: String, port: Int) -> Bool {
        var authority = authority
        var host = host
        // Over the contiguous UTF-8 (a generic `starts(with:)` over two `UTF8View`s costs about 1,000 instructions).
        return authority.withUTF8 { text in
            host.withUTF8 { host in
                guard text.count >= host.count else { return false }
                for index in host.indices where text[index] != host[index] { return false }
                guard text.count > host.count else { return true }
                return text[host.count] == UInt8(ascii: ":")
                    && HTTPSyntax.decimalValue(text[(host.count + 1)...]) == port
            }
        }
    }

    /// Whether `authority` has an `@`, searched over its contiguous UTF-8 (a `UTF8View` search costs about 500
    /// instructions a request).
    private static func carriesUserinfo(_ authority: String) -> Bool {
        var authority = authority
        return authority.withUTF8 { $0.contains(UInt8(ascii: "@")) }
    }

    /// Whether two `host[:port]` texts name one place (names compared in normal form; a missing port is `defaultPort`).
    private static func sameAuthority(_ left: String, _ right: String, defaultPort: Int) -> Bool {
        guard let one = try? RequestTarget.parseAuthority(left, defaultPort: defaultPort),
            let other = try? RequestTarget.parseAuthority(right, defaultPort: defaultPort)
        else { return false }
        return one.host == other.host && one.port == other.port
    }
}
