/// How the body of one message is delimited (RFC 9112 §6.3).
enum HTTP1BodyFraming: Equatable {
    /// No body: the message ends with its head.
    case none
    /// Exactly this many bytes (more than zero).
    case contentLength(Int)
    /// The chunked transfer coding, trailers included.
    case chunked
    /// Everything until the peer closes the connection (responses only).
    case closeDelimited
}

/// The message-length rules for requests and responses, including the smuggling defences.
enum HTTP1Framing {
    /// The body framing of `head`, and whether the parser pauses after the message (CONNECT, or an Upgrade request).
    /// Removes Content-Length from `head` when Transfer-Encoding is also present.
    static func request(_ head: inout HTTPRequestHead) throws(HTTP1ParseError) -> (framing: HTTP1BodyFraming, pause: Bool) {
        if head.headers.values("host").count > 1 {
            throw HTTP1ParseError(.badHeader, "request has more than one Host field")
        }
        if head.method == "CONNECT" {
            return (.none, true)
        }
        let upgrade = head.headers.contains("upgrade") && head.headers.tokens("connection").contains("upgrade")
        if head.version.major == 1 && head.version.minor == 0 && head.headers.contains("transfer-encoding") {
            throw HTTP1ParseError(
                .badHeader,
                "an HTTP/1.0 request cannot use Transfer-Encoding (RFC 9112 §6.1): its body framing would be read differently by the origin"
            )
        }
        if let chunkedIsFinal = try transferCoding(&head.headers) {
            guard chunkedIsFinal else {
                throw HTTP1ParseError(
                    .unsupportedTransferEncoding,
                    "Transfer-Encoding \(HTTPSyntax.quoted(head.headers.values("transfer-encoding").joined(separator: ", "))) does not end in chunked"
                )
            }
            return (.chunked, upgrade)
        }
        return (try contentLength(head.headers).map(lengthFraming) ?? .none, upgrade)
    }

    /// The body framing of a response to a request with `requestMethod` (nil when unknown), and whether the parser
    /// pauses after it (101, or 2xx to CONNECT). Removes Content-Length when Transfer-Encoding is also present.
    static func response(_ head: inout HTTPResponseHead, requestMethod: String?) throws(HTTP1ParseError) -> (framing: HTTP1BodyFraming, pause: Bool) {
        let chunkedIsFinal = try transferCoding(&head.headers)
        let length = try contentLength(head.headers)
        if head.status == 101 {
            return (.none, true)
        }
        if requestMethod == "CONNECT" && (200..<300).contains(head.status) {
            return (.none, true)
        }
        if !head.mayHaveBody(toRequestMethod: requestMethod) {
            return (.none, false)
        }
        if let chunkedIsFinal {
            return (chunkedIsFinal ? .chunked : .closeDelimited, false)
        }
        return (length.map(lengthFraming) ?? .closeDelimited, false)
    }

    private static func lengthFraming(_ length: Int) -> HTTP1BodyFraming {
        length == 0 ? .none : .contentLength(length)
    }

    /// nil without Transfer-Encoding; otherwise whether `chunked` is the final coding. Content-Length is removed when
    /// Transfer-Encoding is present, so no one downstream can frame the message differently.
    private static func transferCoding(_ headers: inout HTTPHeaders) throws(HTTP1ParseError) -> Bool? {
        guard headers.contains("transfer-encoding") else { return nil }
        headers.remove("content-length")
        let codings = headers.tokens("transfer-encoding")
        guard let last = codings.last else {
            throw HTTP1ParseError(.badHeader, "Transfer-Encoding names no transfer coding")
        }
        if codings.filter({ $0 == "chunked" }).count > 1 {
            throw HTTP1ParseError(.unsupportedTransferEncoding, "Transfer-Encoding applies chunked more than once")
        }
        return last == "chunked"
    }

    /// The Content-Length, or nil without one. Every value (repeated fields and comma lists alike) must be decimal
    /// digits, and all must be the same number.
    static func contentLength(_ headers: HTTPHeaders) throws(HTTP1ParseError) -> Int? {
        var length: Int?
        for value in headers.values("content-length") {
            for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                guard let number = HTTPSyntax.decimalValue(HTTPSyntax.trimmingOWS(element).utf8) else {
                    throw HTTP1ParseError(.badContentLength, "Content-Length \(HTTPSyntax.quoted(value)) is not a number")
                }
                if let length, length != number {
                    throw HTTP1ParseError(.badContentLength, "Content-Length values \(length) and \(number) disagree")
                }
                length = number
            }
        }
        return length
    }
}

extension HTTPResponseHead {
    /// Whether a body may follow this head: never for a response to HEAD, nor for 1xx, 204 and 304, whatever
    /// Content-Length or Transfer-Encoding say (RFC 9112 §6.3).
    public func mayHaveBody(toRequestMethod requestMethod: String?) -> Bool {
        !(requestMethod == "HEAD" || status < 200 || status == 204 || status == 304)
    }
}
