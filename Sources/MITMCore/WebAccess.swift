/// Who may see the web UI. The page shows every request that passes through the proxy, authorization headers
/// included, so it answers this machine only (a loopback peer) unless the request carries the token set with
/// `--web-token` (or generated for a `--web-host` other than loopback). A loopback request must also be addressed
/// to a loopback name (`Host: 127.0.0.1:8888`, `localhost`): a web page elsewhere that rebinds its own DNS name
/// to 127.0.0.1 must not read the traffic through the user's browser.
package struct WebAccess: Sendable {
    /// The outcome for one request.
    package enum Decision: Sendable, Equatable {
        /// Serve it; `rememberToken` when the token came in the URL and the browser should keep it in a cookie.
        case allowed(rememberToken: Bool)
        /// Answer 403 with `reason`.
        case refused(reason: String)
    }

    /// What a request presents.
    package struct Request: Sendable {
        /// The peer's IP address.
        package var peer: String?
        /// The `Host` header.
        package var host: String?
        /// The token in the URL (`?token=`).
        package var queryToken: String?
        /// The token in the cookie the page set, or in `Authorization: Bearer`.
        package var headerToken: String?

        /// Creates a request description.
        package init(peer: String?, host: String?, queryToken: String? = nil, headerToken: String? = nil) {
            self.peer = peer
            self.host = host
            self.queryToken = queryToken
            self.headerToken = headerToken
        }
    }

    /// The token that lets other machines in; nil: loopback only.
    package let token: String?

    /// The cookie that carries the token after the first visit.
    package static let cookieName = "mitm_proxy_web"

    /// Whether an IP address is one of this machine's own (beside loopback): a client there is this machine.
    private let isOwnAddress: @Sendable (String) -> Bool

    /// An access policy with `token` (nil: this machine only); `isOwnAddress` tells this machine's interface addresses.
    package init(token: String?, isOwnAddress: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.token = token?.isEmpty == true ? nil : token
        self.isOwnAddress = isOwnAddress
    }

    /// Whether `request` may see the web UI.
    package func decide(_ request: Request) -> Decision {
        if let token {
            if let presented = request.queryToken, Self.constantTimeEqual(presented, token) {
                return .allowed(rememberToken: true)
            }
            if let presented = request.headerToken, Self.constantTimeEqual(presented, token) {
                return .allowed(rememberToken: false)
            }
        }
        let peer = request.peer ?? "an unknown address"
        guard let address = request.peer, Self.isLoopback(address) || Self.hostOf(address).map(isOwnAddress) == true
        else {
            let presentedWrongToken = request.queryToken != nil || request.headerToken != nil
            if token != nil {
                return .refused(
                    reason: presentedWrongToken
                        ? "the token given is wrong; open the address mitm-proxy printed at start (it ends in ?token=...)"
                        : "\(peer) is not this machine: open the address mitm-proxy printed at start, which carries the token (?token=...)"
                )
            }
            return .refused(
                reason:
                    "the web UI shows every request passing through the proxy, so it answers this machine only, and "
                    + "\(peer) is another one; to open it from elsewhere, start mitm-proxy with --web-token TOKEN and open "
                    + "http://ADDRESS:PORT/?token=TOKEN")
        }
        // A name must be loopback's (a page that points its own name at this machine must not read the traffic); an IP
        // literal of this machine's own is no such trick.
        if let host = request.host, !Self.namesLoopback(host: host), Self.hostOf(host).map(isOwnAddress) != true {
            return .refused(
                reason: "the request was addressed to \(host), not to this machine's loopback address; open "
                    + "http://127.0.0.1:PORT/ or http://localhost:PORT/ (a page that points its own name at 127.0.0.1 must not read the traffic)"
            )
        }
        return .allowed(rememberToken: false)
    }

    /// Whether `address` (an IP literal) is a loopback address: 127.0.0.0/8, ::1, or IPv4-mapped 127.x.
    package static func isLoopback(_ address: String) -> Bool {
        var text = address.lowercased()
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }
        if text.hasPrefix("::ffff:") { text = String(text.dropFirst(7)) }
        if text == "::1" || text == "0:0:0:0:0:0:0:1" { return true }
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4,
            octets.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCIIDigit) && Int($0)! <= 255 })
        else {
            return false
        }
        return octets[0] == "127"
    }

    /// Whether a `Host` header value names this machine's loopback: `127.0.0.1[:port]`, `[::1][:port]`, `localhost`,
    /// a name under `.localhost`.
    /// The host of an address or a `Host` value (`[v6]:port`, `host:port`), in normal form.
    static func hostOf(_ authority: String) -> String? {
        if let address = IPAddress(authority) { return address.description }
        return try? RequestTarget.parseAuthority(authority, defaultPort: 80).host
    }

    package static func namesLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            return isLoopback(String(name[name.index(after: name.startIndex)..<close]))
        }
        if let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        if name.hasSuffix(".") { name.removeLast() }
        return name == "localhost" || name.hasSuffix(".localhost") || isLoopback(name)
    }

    /// Compares without stopping at the first difference, so the time taken does not tell how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<max(left.count, right.count) {
            let x = index < left.count ? left[index] : 0
            let y = index < right.count ? right[index] : 0
            difference |= x ^ y
        }
        return difference == 0 && left.count == right.count
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
