/// Fields that describe one connection rather than the message (RFC 9110 §7.6.1), which a proxy removes
/// before forwarding, and the request fields meant for the proxy itself.
package enum HopByHopFields {
    /// Removes `Connection` and the fields it names, `Keep-Alive`, `Proxy-Connection`, `TE` (keeping
    /// `TE: trailers`, which the relay honours) and `Upgrade` unless the message is an upgrade. Framing fields and
    /// `Host` stay even when `Connection` names them: removing them would change how the next hop reads the
    /// message. `Connection: close`, `keep-alive` and `Upgrade` are sent again where they apply (persistence is
    /// kept per hop, and HTTP/1.0 peers need `keep-alive` said).
    package static func strip(_ headers: inout HTTPHeaders, upgrading: Bool) {
        // Most messages carry none of these, or only `Connection: keep-alive` or `close`: both are handled
        // without allocating, on the per-request path.
        var hopByHopCount = 0
        var connectionIndex: Int?
        for index in headers.fields.indices where isAlwaysHopByHop(headers.fields[index].name) {
            hopByHopCount += 1
            if HTTPSyntax.equalsIgnoringASCIICase(headers.fields[index].name, "connection") { connectionIndex = index }
        }
        guard hopByHopCount > 0 else { return }
        if hopByHopCount == 1, let connectionIndex, !upgrading,
            let persistence = persistenceOnly(headers.fields[connectionIndex].value)
        {
            // Already as it would be written again (nginx sends `Connection: keep-alive` on every response): left
            // where it is, so the headers are not copied to be changed.
            if let persistence, headers.fields[connectionIndex].name == "Connection",
                headers.fields[connectionIndex].value == persistence
            {
                return
            }
            headers.fields.remove(at: connectionIndex)
            if let persistence { headers.add(name: "Connection", value: persistence) }
            return
        }
        let options = headers.tokens("connection")
        let keepsTrailers = headers.containsToken("trailers", in: "te")
        let named = options.filter { !framingAndHost.contains($0) && !(upgrading && $0 == "upgrade") }
        headers.fields.removeAll { field in
            (isAlwaysHopByHop(field.name) && !(upgrading && HTTPSyntax.equalsIgnoringASCIICase(field.name, "upgrade")))
                || named.contains { HTTPSyntax.equalsIgnoringASCIICase(field.name, $0) }
        }
        if upgrading {
            headers.add(name: "Connection", value: "Upgrade")
        } else if options.contains("close") {
            headers.add(name: "Connection", value: "close")
        } else if options.contains("keep-alive") {
            headers.add(name: "Connection", value: "keep-alive")
        }
        if keepsTrailers { headers.add(name: "TE", value: "trailers") }
    }

    /// For a `Connection` value that names nothing but `close` and `keep-alive`: what to say again on the next hop
    /// (`close` wins; `.some(nil)` for an empty list). Nil when it names anything else.
    private static func persistenceOnly(_ value: String) -> String?? {
        var close = false
        var keepAlive = false
        var other = false
        HTTPSyntax.forEachListElement(of: value) { element in
            if HTTPSyntax.equalsIgnoringASCIICase(element, "close") {
                close = true
            } else if HTTPSyntax.equalsIgnoringASCIICase(element, "keep-alive") {
                keepAlive = true
            } else {
                other = true
            }
            return !other
        }
        if other { return nil }
        return .some(close ? "close" : keepAlive ? "keep-alive" : nil)
    }

    /// Fields a `Connection` option cannot remove.
    private static let framingAndHost = ["content-length", "transfer-encoding", "host"]

    private static func isAlwaysHopByHop(_ name: String) -> Bool {
        // By length first: most names match none of the lengths, and this runs for every field of every message.
        switch name.utf8.count {
        case 2: HTTPSyntax.equalsIgnoringASCIICase(name, "te")
        case 7: HTTPSyntax.equalsIgnoringASCIICase(name, "upgrade")
        case 10:
            HTTPSyntax.equalsIgnoringASCIICase(name, "connection")
                || HTTPSyntax.equalsIgnoringASCIICase(name, "keep-alive")
        case 16: HTTPSyntax.equalsIgnoringASCIICase(name, "proxy-connection")
        default: false
        }
    }

    /// Prepares a request head for the origin: hop-by-hop fields stripped, `Proxy-Authorization` (the proxy's
    /// credentials) removed, repeated equal `Content-Length` values written once, and `Host` set to `authority`
    /// when given (an absolute-form target wins over the Host field, RFC 9112 §3.2.2).
    package static func forwarding(_ head: HTTPRequestHead, authority: String?, upgrading: Bool) -> HTTPRequestHead {
        var forwarded = head
        strip(&forwarded.headers, upgrading: upgrading)
        forwarded.headers.remove("proxy-authorization")
        collapseContentLength(&forwarded.headers)
        if let authority { forwarded.headers.replaceOrAdd(name: "Host", value: authority) }
        return forwarded
    }

    /// Persistence is per hop (RFC 9112 §9.3): a client that closes its connection after this request does not
    /// make the proxy close an upstream connection it can reuse. Removes `Connection: close` from a request already
    /// prepared by `forwarding(_:authority:upgrading:)`, and asks an HTTP/1.0 origin to keep the connection open.
    public static func keepingUpstreamOpen(_ head: inout HTTPRequestHead) {
        if head.version.major == 1 && head.version.minor == 0 {
            head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        } else if head.headers.containsToken("close", in: "connection") {
            head.headers.remove("connection")
        }
    }

    /// Prepares a response head for the client: hop-by-hop fields stripped (kept for `101 Switching Protocols`)
    /// and repeated equal `Content-Length` values written once.
    package static func forwarding(_ head: HTTPResponseHead) -> HTTPResponseHead {
        var forwarded = head
        strip(&forwarded.headers, upgrading: head.status == 101)
        collapseContentLength(&forwarded.headers)
        return forwarded
    }

    /// The parser has already checked that every Content-Length value is the same number.
    private static func collapseContentLength(_ headers: inout HTTPHeaders) {
        var count = 0
        var listsSeveral = false
        for index in headers.fields.indices
        where HTTPSyntax.equalsIgnoringASCIICase(headers.fields[index].name, "content-length") {
            count += 1
            listsSeveral = listsSeveral || headers.fields[index].value.utf8.contains(UInt8(ascii: ","))
        }
        guard count > 1 || listsSeveral, let length = try? HTTP1Framing.contentLength(headers) else { return }
        headers.replaceOrAdd(name: "Content-Length", value: String(length))
    }
}
