/// Fields that describe one connection rather than the message (RFC 9110 §7.6.1), which a proxy removes
/// before forwarding, and the request fields meant for the proxy itself.
public enum HopByHopFields {
    /// Removes `Connection` and the fields it names, `Keep-Alive`, `Proxy-Connection`, `TE` (keeping
    /// `TE: trailers`, which the relay honours) and `Upgrade` unless the message is an upgrade. Framing fields and
    /// `Host` stay even when `Connection` names them: removing them would change how the next hop reads the
    /// message. `Connection: close`, `keep-alive` and `Upgrade` are sent again where they apply (persistence is
    /// kept per hop, and HTTP/1.0 peers need `keep-alive` said).
    public static func strip(_ headers: inout HTTPHeaders, upgrading: Bool) {
        let options = headers.tokens("connection")
        let keepsTrailers = headers.tokens("te").contains("trailers")
        var named = Set(options).union(["connection", "keep-alive", "proxy-connection", "te", "upgrade"])
        named.subtract(["content-length", "transfer-encoding", "host"])
        if upgrading { named.remove("upgrade") }
        headers.fields.removeAll { named.contains(HTTPSyntax.asciiLowercased($0.name[...])) }
        if upgrading {
            headers.add(name: "Connection", value: "Upgrade")
        } else if options.contains("close") {
            headers.add(name: "Connection", value: "close")
        } else if options.contains("keep-alive") {
            headers.add(name: "Connection", value: "keep-alive")
        }
        if keepsTrailers { headers.add(name: "TE", value: "trailers") }
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
