import Foundation
import MITMCore

/// A request to the web UI, as its connection read it.
struct WebRequest: Sendable {
    var method: String
    /// The path without the query.
    var path: String
    /// Query parameters, percent-decoded.
    var query: [String: String]
    var headers: HTTPHeaders
    var body: [UInt8]
    /// The peer's IP address.
    var peer: String?
    /// Whether it came to the web UI's own port (`--web-port`), not the proxy's.
    var onWebPort: Bool

    /// `head` with its body, from `peer`.
    init(head: HTTPRequestHead, body: [UInt8], peer: String?, onWebPort: Bool = false) {
        self.onWebPort = onWebPort
        method = head.method
        let parts = head.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = parts.first.map(String.init) ?? "/"
        query = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let field = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                    String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
                }
                query[field[0]] = field.count > 1 ? field[1] : ""
            }
        }
        headers = head.headers
        self.body = body
        self.peer = peer
    }

    /// The token the request carries in its cookie or an `Authorization: Bearer` header.
    var headerToken: String? {
        if let authorization = headers.first("authorization"), authorization.lowercased().hasPrefix("bearer ") {
            return String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        }
        for cookie in headers.values("cookie").flatMap({ $0.split(separator: ";") }) {
            let pair = cookie.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == WebAccess.cookieName { return pair[1] }
        }
        return nil
    }
}

/// What the web UI answers.
enum WebReply: Sendable {
    /// A whole response.
    case response(WebResponse)
    /// The live feed: the response head and the first messages; the connection stays open.
    case eventStream(initial: [UInt8])
    /// Not a web UI path: the proxy's own pages (the CA download) answer it.
    case notMine
    /// An answer that takes a while (a replay's outcome): `start` begins the work and calls back once, on any thread.
    case later(_ start: @Sendable (_ respond: @escaping @Sendable (WebResponse) -> Void) -> Void)
}

/// A whole response of the web UI.
package struct WebResponse: Sendable {
    package var status: Int
    package var reason: String
    package var contentType: String
    package var body: [UInt8]
    /// Headers beyond the ones every response carries.
    package var extraHeaders: [(String, String)]

    package init(
        status: Int, reason: String, contentType: String, body: [UInt8], extraHeaders: [(String, String)] = []
    ) {
        self.status = status
        self.reason = reason
        self.contentType = contentType
        self.body = body
        self.extraHeaders = extraHeaders
    }

    /// The response head; every one forbids caching, framing and content sniffing, and loads nothing from elsewhere.
    func head(keepAlive: Bool) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.count))
        Self.addCommonHeaders(to: &headers)
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        return HTTPResponseHead(status: status, reason: reason, headers: headers)
    }

    static func addCommonHeaders(to headers: inout HTTPHeaders) {
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "Content-Security-Policy", value: contentSecurityPolicy)
        headers.add(name: "X-Mitm-Proxy", value: "web-ui")
    }

    /// Only the page's own files and data: no script, style or image from anywhere else, no framing.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    static func ok(_ contentType: String, _ body: [UInt8]) -> WebResponse {
        WebResponse(status: 200, reason: "OK", contentType: contentType, body: body)
    }

    static func json(_ value: some Encodable) -> WebResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return ok("application/json", Array(try encoder.encode(value)))
        } catch {
            return text(500, "cannot encode the answer as JSON: \(error)")
        }
    }

    package static func text(_ status: Int, _ message: String) -> WebResponse {
        WebResponse(
            status: status, reason: HTTPReasonPhrase.proxyAnswers[status] ?? reasonPhrases[status] ?? "Error",
            contentType: "text/plain; charset=utf-8", body: Array("mitm-proxy: \(message)\n".utf8))
    }

    static func attachment(_ contentType: String, _ body: [UInt8], filename: String) -> WebResponse {
        WebResponse(
            status: 200, reason: "OK", contentType: contentType, body: body,
            extraHeaders: [("Content-Disposition", "attachment; filename=\"\(filename)\"")])
    }

    private static let reasonPhrases = [
        204: "No Content", 303: "See Other", 403: "Forbidden", 413: "Content Too Large", 500: "Internal Server Error",
        503: "Service Unavailable",
    ]
}
