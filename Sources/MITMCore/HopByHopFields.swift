/// Fields that describe one connection rather than the message (RFC 9110 §7.6.1), which a proxy removes
/// before forwarding, and the request fields meant for the proxy itself.
public enum HopByHopFields {
    /// Removes `Connection` and the fields it names, `Keep-Alive`, `Proxy-Connection`, `TE` (keeping
    /// `TE: trailers`, which the relay honours) and `Upgrade` unless the message is an upgrade. Framing fields and
    /// `Host` stay even when `Connection` names them: removing them would change how the next hop reads the
    /// message. `Connection: close`, `keep-alive` and `Upgrade` are sent again where they apply (persistence is
    /// kept per hop, and HTTP/1.0 peers need `keep-alive` said).
    public static func strip(_ headers: inout HTTPHeaders, upgrading: Bool) {
        // Most messages carry none of these: leave them untouched, without allocating, on the per-request path.
        guard headers.fields.contains(where: { isAlwaysHopByHop($0.name) }) else { return }
        let options = headers.tokens("connection")
        let keepsTrailers = headers.tokens("te").contains("trailers")
        var named = options.filter { !["content-length", "transfer-encoding", "host"].contains($0) } + alwaysHopByHop
        if upgrading { named.removeAll { $0 == "upgrade" } }
        headers.fields.removeAll { field in named.contains { HTTPSyntax.equalsIgnoringASCIICase(field.name, $0) } }
        if upgrading {
            headers.add(name: "Connection", value: "Upgrade")
        } else if options.contains("close") {
            headers.add(name: "Connection", value: "close")
        } else if options.contains("keep-alive") {
            headers.add(name: "Connection", value: "keep-alive")
        }
        if keepsTrailers { headers.add(name: "TE", value: "trailers") }
    }

    private static let alwaysHopByHop = ["connection", "keep-alive", "proxy-connection", "te", "upgrade"]

    private static func isAlwaysHopByHop(_ name: String) -> Bool {
        alwaysHopByHop.contains { HTTPSyntax.equalsIgnoringASCIICase(name, $0) }
    }

    /// Prepares a request head for the origin: hop-by-hop fields stripped, `Proxy-Authorization` (the proxy's
    /// credentials) removed, repeated equal `Content-Length` values written once, and `Host` set to `authority`
    /// when given (an absolute-form target wins over the Host field, RFC 9112 §3.2.2).
    public static func forwarding(_ head: HTTPRequestHead, authority: String?, upgrading: Bool) -> HTTPRequestHead {
        var forwarded = head
        strip(&forwarded.headers, upgrading: upgrading)
        forwarded.headers.remove("proxy-authorization")
        collapseContentLength(&forwarded.headers)
        if let authority { forwarded.headers.replaceOrAdd(name: "Host", value: authority) }
        return forwarded
    }

    /// Prepares a response head for the client: hop-by-hop fields stripped (kept for `101 Switching Protocols`)
    /// and repeated equal `Content-Length` values written once.
    public static func forwarding(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var forwarded = head
        strip(&forwarded.headers, upgrading: head.status == 101)
        collapseContentLength(&forwarded.headers)
        return forwarded
    }

    /// The parser has already checked that every Content-Length value is the same number.
    private static func collapseContentLength(_ headers: inout HTTPHeaders) {
        let values = headers.values("content-length")
        guard values.count > 1 || values.first?.contains(",") == true,
              let length = try? HTTP1Framing.contentLength(headers) else { return }
        headers.replaceOrAdd(name: "Content-Length", value: String(length))
    }
}
