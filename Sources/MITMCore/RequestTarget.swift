/// The four forms of an HTTP/1 request-target (RFC 9112 §3.2), validated.
package enum RequestTarget: Sendable, Equatable {
    /// `/path?query`, as sent to an origin server.
    case origin(String)
    /// `http://host[:port]/path?query`, as sent to a forward proxy.
    case absolute(AbsoluteURL)
    /// `host:port` of a CONNECT request; IPv6 hosts without brackets.
    case authority(host: String, port: Int)
    /// `*` of a server-wide OPTIONS request.
    case asterisk

    /// Interprets `target` of a request with `method`. CONNECT takes only `host:port` (port required, IPv6 in brackets);
    /// `*` is only for OPTIONS; otherwise origin-form or an `http`/`https` absolute-form without userinfo or fragment.
    /// Errors are `badStartLine` with a reason naming the problem.
    package static func parse(_ target: String, method: String) throws(HTTP1ParseError) -> RequestTarget {
        if method == "CONNECT" {
            let (host, port) = try parseAuthority(target, defaultPort: nil)
            return .authority(host: host, port: port)
        }
        if target == "*" {
            guard method == "OPTIONS" else {
                throw HTTP1ParseError(.badStartLine, "request target \"*\" is only allowed for OPTIONS, not \(method)")
            }
            return .asterisk
        }
        if target.hasPrefix("/") {
            try checkPathAndQuery(target[...], of: target)
            return .origin(target)
        }
        if target.contains("://") {
            return .absolute(try parseAbsolute(target))
        }
        throw HTTP1ParseError(
            .badStartLine, "request target \(HTTPSyntax.quoted(target)) is neither a path nor an http(s) URL")
    }

    /// Splits `host[:port]` (IPv6 hosts in brackets) as found in CONNECT targets, URLs and Host headers. The host is
    /// validated and normalized by `HostName`; without a port, `defaultPort` is used, and nil makes the port required.
    package static func parseAuthority(_ authority: String, defaultPort: Int?) throws(HTTP1ParseError) -> (
        host: String, port: Int
    ) {
        guard !authority.isEmpty else {
            throw HTTP1ParseError(.badStartLine, "the host is empty")
        }
        let host: String
        let portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw HTTP1ParseError(
                    .badStartLine, "IPv6 address in \(HTTPSyntax.quoted(authority)) has no closing bracket")
            }
            let literal = String(authority[authority.index(after: authority.startIndex)..<close])
            guard HostName.isIPv6(literal), let normalized = HostName.validate(literal) else {
                throw HTTP1ParseError(.badStartLine, "\(HTTPSyntax.quoted(literal)) in brackets is not an IPv6 address")
            }
            host = normalized
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty {
                portText = nil
            } else if rest.first == ":" {
                portText = rest.dropFirst()
            } else {
                throw HTTP1ParseError(.badStartLine, "\(HTTPSyntax.quoted(authority)) has junk after the IPv6 address")
            }
        } else {
            // Split on the colon's bytes: splitting the String compares Characters (10 k instructions a CONNECT).
            let utf8 = authority.utf8
            let colon = utf8.firstIndex(of: UInt8(ascii: ":"))
            if let colon, utf8[utf8.index(after: colon)...].contains(UInt8(ascii: ":")) {
                throw HTTP1ParseError(
                    .badStartLine,
                    "\(HTTPSyntax.quoted(authority)) has several colons: an IPv6 address must be in brackets")
            }
            let name = colon.map { String(authority[..<$0]) } ?? authority
            guard let normalized = HostName.validate(name) else {
                throw HTTP1ParseError(.badStartLine, "host \(HTTPSyntax.quoted(name)) is not a valid host name")
            }
            host = normalized
            portText = colon.map { authority[utf8.index(after: $0)...] }
        }
        guard let portText else {
            guard let defaultPort else {
                throw HTTP1ParseError(.badStartLine, "\(HTTPSyntax.quoted(authority)) has no port")
            }
            return (host, defaultPort)
        }
        guard portText.utf8.count <= 5, let port = HTTPSyntax.decimalValue(portText.utf8), (1...65_535).contains(port)
        else {
            throw HTTP1ParseError(
                .badStartLine, "port \(HTTPSyntax.quoted(String(portText))) is not a number in 1...65535")
        }
        return (host, port)
    }

    private static func parseAbsolute(_ target: String) throws(HTTP1ParseError) -> AbsoluteURL {
        guard let separator = target.firstRange(of: "://") else {
            throw HTTP1ParseError(.badStartLine, "request target \(HTTPSyntax.quoted(target)) is not a URL")
        }
        let scheme = HTTPSyntax.asciiLowercased(target[..<separator.lowerBound])
        guard scheme == "http" || scheme == "https" else {
            throw HTTP1ParseError(
                .badStartLine, "URL scheme \(HTTPSyntax.quoted(scheme)) is not supported (only http and https)")
        }
        let rest = target[separator.upperBound...]
        let authorityEnd = rest.firstIndex(where: isAuthorityTerminator) ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        if authority.utf8.contains(UInt8(ascii: "@")) {
            throw HTTP1ParseError(
                .badStartLine, "URL \(HTTPSyntax.quoted(target)) has userinfo (user@host), which is not allowed")
        }
        let (host, port) = try parseAuthority(authority, defaultPort: AbsoluteURL.defaultPort(forScheme: scheme))
        let path = rest[authorityEnd...]
        try checkPathAndQuery(path, of: target)
        let pathAndQuery = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
        return AbsoluteURL(scheme: scheme, host: host, port: port, pathAndQuery: pathAndQuery)
    }

    private static func isAuthorityTerminator(_ character: Character) -> Bool {
        character == "/" || character == "?" || character == "#"
    }

    /// Paths and queries hold visible ASCII only and no fragment.
    private static func checkPathAndQuery(_ path: Substring, of target: String) throws(HTTP1ParseError) {
        // Read in place: an origin-form target is checked for every request.
        var path = path
        let (visible, fragment) = path.withUTF8 { bytes in
            (bytes.allSatisfy(HTTPSyntax.isVisibleASCII), bytes.contains(UInt8(ascii: "#")))
        }
        guard visible else {
            throw HTTP1ParseError(
                .badStartLine, "request target \(HTTPSyntax.quoted(target)) has characters other than visible ASCII")
        }
        if fragment {
            throw HTTP1ParseError(.badStartLine, "request target \(HTTPSyntax.quoted(target)) has a fragment")
        }
    }
}
