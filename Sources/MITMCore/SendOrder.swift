import Foundation

/// What the web UI asks to send: a kept flow's request resent (`flow` alone), the same changed (`flow` with any of
/// the other fields), or a request composed from scratch (no `flow`: `method` and `url` at least).
package struct SendOrder: Decodable, Sendable, Equatable {
    /// The flow resent.
    package var flow: Int?
    package var method: String?
    /// An absolute `http://` or `https://` URL.
    package var url: String?
    /// Every header, as `[name, value]` pairs; the framing and hop-by-hop ones are the proxy's to set.
    package var headers: [[String]]?
    /// The body as text, or as base64.
    package var body: String?
    package var bodyBase64: String?

    /// An order of the given fields.
    package init(
        flow: Int? = nil, method: String? = nil, url: String? = nil, headers: [[String]]? = nil, body: String? = nil,
        bodyBase64: String? = nil
    ) {
        self.flow = flow
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.bodyBase64 = bodyBase64
    }

    /// Why an order cannot be sent, with the web UI's status for it.
    package struct Problem: Error, Equatable {
        package var status: Int
        package var message: String
    }

    /// Fields that only the connection carrying the request may set.
    static let connectionFields: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive",
        "proxy-authorization", "proxy-connection", "te", "upgrade", "trailer",
    ]

    /// The request to send (its target the absolute URL) and its body, from `original` (the flow named, if it is
    /// still kept) changed as the order says.
    package func request(original: Flow?) -> Result<(head: HTTPRequestHead, body: [UInt8]), Problem> {
        var method = "GET"
        var url = ""
        var headers: [[String]] = []
        var body: [UInt8] = []
        if let flow {
            guard let original else {
                return .failure(Problem(status: 404, message: "flow \(flow) is no longer kept, so it cannot be resent"))
            }
            guard case .exchange(let record) = original.content else {
                return .failure(
                    Problem(
                        status: 400,
                        message:
                            "flow \(flow) is not an HTTP exchange (a TLS handshake or a tunnel); only requests are resent"
                    ))
            }
            method = record.request.method
            url = record.url
            headers = record.request.headers.map { [$0.name, $0.value] }
            if self.body == nil && bodyBase64 == nil {
                if original.bodiesReleased || record.requestBody.isTruncated {
                    return .failure(
                        Problem(
                            status: 409,
                            message: "the request body of flow \(flow) was not kept whole "
                                + "(\(record.requestBody.bytes.count) of \(record.requestBodyBytes) bytes); edit and resend it with a body"
                        ))
                }
                body = record.requestBody.bytes
            }
        } else if self.method == nil || self.url == nil {
            return .failure(Problem(status: 400, message: "a composed request needs a method and a URL"))
        }
        if let given = self.method { method = given.uppercased() }
        if let given = self.url { url = given }
        if let given = self.headers { headers = given }
        if let text = self.body { body = Array(text.utf8) }
        if let encoded = bodyBase64 {
            guard let decoded = Data(base64Encoded: encoded) else {
                return .failure(Problem(status: 400, message: "bodyBase64 is not base64"))
            }
            body = Array(decoded)
        }
        guard !method.isEmpty, HTTPSyntax.isToken(method.utf8), method != "CONNECT" else {
            return .failure(Problem(status: 400, message: "\"\(method)\" is not a method a request can be sent with"))
        }
        guard case .absolute(let target)? = try? RequestTarget.parse(url, method: method),
            ["http", "https"].contains(target.scheme)
        else {
            return .failure(Problem(status: 400, message: "\"\(url)\" is not an absolute http:// or https:// URL"))
        }
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: target.authority)
        for pair in headers {
            guard pair.count == 2, !pair[0].isEmpty, HTTPSyntax.isToken(pair[0].utf8), !pair[0].hasPrefix(":") else {
                return .failure(
                    Problem(status: 400, message: "header \(pair) is not a [name, value] pair with a valid name"))
            }
            guard pair[1].utf8.allSatisfy({ ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }) else {
                return .failure(
                    Problem(
                        status: 400,
                        message: "the value of header \(pair[0]) contains a line break or control character"))
            }
            if Self.connectionFields.contains(pair[0].lowercased()) { continue }
            fields.add(name: pair[0], value: pair[1])
        }
        return .success((HTTPRequestHead(method: method, target: target.text, headers: fields), body))
    }
}
