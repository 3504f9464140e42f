import MITMCore

/// Where a plain-HTTP connection redirected to the transparent listener was going (`--transparent-port`, `--capture`):
/// its original destination, or the name the capture's DNS answered for it.
struct TransparentOrigin {
    let host: String
    let port: Int
}

/// The plain relay's requests on a redirected connection: origin-form, each named by its own `Host`, all dialled to where
/// the connection was going (a Host names a place for the record and the rules, never one to go to).
extension HTTPRelay {
    func transparentRoute(for head: HTTPRequestHead, origin: TransparentOrigin) -> PlainRoute {
        let url: AbsoluteURL
        do {
            url = try transparentURL(for: head, origin: origin)
        } catch {
            return .answer(
                host: origin.host, port: origin.port, scheme: "http", .error(status: 400, reason: error.reason))
        }
        guard LocalPages.handles(host: url.host) else { return .forward(url) }
        return .answer(
            host: url.host, port: url.port, scheme: "http",
            LocalPages.response(
                for: url.pathAndQuery, request: head, authority: context.authority,
                advertised: context.configuration.advertised))
    }

    /// The request's URL: its path, at the host its `Host` names (or its absolute-form URL names), validated as a CONNECT
    /// authority is; at `origin`'s host when that is missing, repeated or no host name. The port is always `origin`'s.
    func transparentURL(for head: HTTPRequestHead, origin: TransparentOrigin) throws(HTTP1ParseError) -> AbsoluteURL {
        switch try RequestTarget.parse(head.target, method: head.method) {
        case .origin(let path):
            return AbsoluteURL(
                scheme: "http", host: Self.hostHeaderName(head) ?? origin.host, port: origin.port, pathAndQuery: path)
        case .absolute(let url) where url.scheme == "http":
            return AbsoluteURL(scheme: "http", host: url.host, port: origin.port, pathAndQuery: url.pathAndQuery)
        case .absolute, .authority, .asterisk:
            throw HTTP1ParseError(
                .badStartLine,
                "request target \(head.target) on a plain-HTTP connection to "
                    + "\(origin.host):\(origin.port) is not a path")
        }
    }

    /// The host of the request's one `Host`, in normal form; nil when there is none, several, or it is no host name.
    static func hostHeaderName(_ head: HTTPRequestHead) -> String? {
        let hosts = head.headers.values("host")
        guard hosts.count == 1, let authority = try? RequestTarget.parseAuthority(hosts[0], defaultPort: 80) else {
            return nil
        }
        return authority.host
    }

    /// The URL of a request the plain relay forwards; nil for the proxy's own pages and bad targets.
    func plainURL(for head: HTTPRequestHead) -> AbsoluteURL? {
        if let transparentOrigin {
            guard let url = try? transparentURL(for: head, origin: transparentOrigin),
                !LocalPages.handles(host: url.host)
            else { return nil }
            return url
        }
        guard case .absolute(let url)? = try? RequestTarget.parse(head.target, method: head.method),
            url.scheme == "http",
            !isLocal(url)
        else { return nil }
        return url
    }

    /// `head` as it goes to `url`'s origin: origin-form, with the URL's authority as `Host` (a redirected client's own
    /// `Host` is kept: it addressed the origin itself).
    func forwardedPlain(_ head: HTTPRequestHead, to url: AbsoluteURL, upgrading upgrade: Bool) -> HTTPRequestHead {
        var forwarded = HopByHopFields.forwarding(
            head, authority: transparentOrigin == nil ? url.authority : nil, upgrading: upgrade)
        forwarded.target = url.pathAndQuery
        return forwarded
    }

    /// Where the connection for `url` is dialled: `url`'s origin, or where a redirected connection was going.
    func dialTarget(for url: AbsoluteURL) -> (host: String, port: Int) {
        transparentOrigin.map { ($0.host, $0.port) } ?? (url.host, url.port)
    }
}
