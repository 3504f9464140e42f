import MITMCore

/// A response the proxy writes itself: its own pages, errors, and 502s for unreachable upstreams.
struct LocalResponse {
    let status: Int
    let reasonPhrase: String
    let contentType: String
    let body: [UInt8]
    /// The explanation carried in the body, for the log.
    let reasonText: String
    /// Fields beyond the ones every local response has (a `407`'s challenge, a download's file name).
    var extraHeaders = HTTPHeaders()
    /// A rule's answer: its own head (instead of the proxy's usual one), a file streamed as the body, a fault.
    var rule: RuledAnswer?

    func head(keepAlive: Bool) -> HTTPResponseHead {
        if let ruleHead = rule?.head {
            var head = ruleHead
            if !keepAlive { head.headers.replaceOrAdd(name: "Connection", value: "close") }
            return head
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        headers.add(name: "X-Mitm-Proxy", value: "local")
        headers.fields += extraHeaders.fields
        return HTTPResponseHead(status: status, reason: reasonPhrase, headers: headers)
    }

    static func error(status: Int, reason: String) -> LocalResponse {
        let phrase = reasonPhrases[status] ?? "Error"
        return LocalResponse(
            status: status, reasonPhrase: phrase, contentType: "text/plain; charset=utf-8",
            body: Array("mitm-proxy: \(status) \(phrase): \(reason)\n".utf8), reasonText: reason)
    }

    /// A `407` challenging the client for the `--proxy-auth` credentials.
    static func proxyAuthenticationRequired(reason: String) -> LocalResponse {
        var response = error(
            status: 407, reason: reason + "; configure the proxy's user name and password in the client")
        response.extraHeaders.add(name: "Proxy-Authenticate", value: ProxyCredentials.challenge)
        return response
    }

    static func badGateway(host: String, port: Int, reason: String) -> LocalResponse {
        var text = "mitm-proxy could not get a response from \(host):\(port): \(reason)\n"
        if reason.contains("certificate") {
            text +=
                "If this server uses a private or test CA, pass it with --upstream-ca FILE (or, for a throwaway test, --upstream-insecure).\n"
        } else if reason.contains("DNS") {
            text += "Check the host name, or map it to an address with --resolve \(host):ADDRESS.\n"
        } else if reason.contains("refused") {
            text += "Check that the server is running and listening on port \(port).\n"
        }
        return LocalResponse(
            status: 502, reasonPhrase: "Bad Gateway", contentType: "text/plain; charset=utf-8",
            body: Array(text.utf8), reasonText: "\(host):\(port): \(reason)")
    }

    static func gatewayTimeout(host: String, port: Int, reason: String) -> LocalResponse {
        let text =
            "mitm-proxy sent the request to \(host):\(port), which \(reason).\nCheck the server; a slow one can be given longer with --idle-timeout SECONDS.\n"
        return LocalResponse(
            status: 504, reasonPhrase: "Gateway Timeout", contentType: "text/plain; charset=utf-8",
            body: Array(text.utf8), reasonText: "\(host):\(port): \(reason)")
    }

    static let reasonPhrases = HTTPReasonPhrase.proxyAnswers
}
