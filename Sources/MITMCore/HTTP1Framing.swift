/// How the body of one message is delimited (RFC 9112 §6.3).
public enum HTTP1BodyFraming: Sendable, Equatable {
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
    static func request(_ head: HTTPRequestHead) throws(HTTP1ParseError) -> (framing: HTTP1BodyFraming, pause: Bool) {
        if head.headers.count(named: "host") > 1 {
            throw HTTP1ParseError(.badHeader, "request has more than one Host field")
        }
        if head.method == "CONNECT" {
            return (.none, true)
        }
        let upgrade = head.headers.contains("upgrade") && head.headers.containsToken("upgrade", in: "connection")
        if head.version.major == 1 && head.version.minor == 0 && head.headers.contains("transfer-encoding") {
            throw HTTP1ParseError(
                .badHeader,
                "an HTTP/1.0 request cannot use Transfer-Encoding (RFC 9112 §6.1): its body framing would be read differently by the origin"
            )
        }
        if try transferCoding(head.headers) {
            return (.chunked, upgrade)
        }
        return (try contentLength(head.headers).map(lengthFraming) ?? .none, upgrade)
    }

    /// The body framing of a response to a request with `requestMethod` (nil when unknown), and whether the parser
    /// pauses after it (101, or 2xx to CONNECT). The framing rules are the request's: a response whose length the
    /// client and the proxy could read differently is refused, not guessed at.
    static func response(_ head: HTTPResponseHead, requestMethod: String?) throws(HTTP1ParseError) -> (
        framing: HTTP1BodyFraming, pause: Bool
    ) {
        let chunked = try transferCoding(head.headers)
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
        if chunked {
            return (.chunked, false)
        }
        return (length.map(lengthFraming) ?? .closeDelimited, false)
    }

    private static func lengthFraming(_ length: Int) -> HTTP1BodyFraming {
        length == 0 ? .none : .contentLength(length)
    }

    /// Whether the body is chunked: false without Transfer-Encoding. Throws unless `chunked` is the final coding, applied
    /// once, with no Content-Length beside it.
    ///
    /// RFC 9112 §6.1 lets a recipient of Content-Length and Transfer-Encoding together drop the Content-Length; a proxy
    /// refuses instead, because such a message is the classic request-smuggling shape: whichever hop reads the other
    /// field frames a different message. §6.3 makes a request whose final coding is not chunked a 400; a response is
    /// held to the same rule (a 502) rather than read until close, for the same reason.
    private static func transferCoding(_ headers: HTTPHeaders) throws(HTTP1ParseError) -> Bool {
        guard headers.contains("transfer-encoding") else { return false }
        let codings = headers.tokens("transfer-encoding")
        guard let last = codings.last else {
            throw HTTP1ParseError(.badHeader, "Transfer-Encoding names no transfer coding")
        }
        if headers.contains("content-length") {
            throw HTTP1ParseError(
                .badContentLength,
                "Content-Length and Transfer-Encoding together make the message length ambiguous (a request-smuggling shape)"
            )
        }
        if codings.filter({ $0 == "chunked" }).count > 1 {
            throw HTTP1ParseError(.unsupportedTransferEncoding, "Transfer-Encoding applies chunked more than once")
        }
        guard last == "chunked" else {
            let value = headers.values("transfer-encoding").joined(separator: ", ")
            throw HTTP1ParseError(
                .unsupportedTransferEncoding,
                "Transfer-Encoding \(HTTPSyntax.quoted(value)) does not end in chunked, so the message length cannot be known"
            )
        }
        return true
    }

    /// The Content-Length, or nil without one. Every value (repeated fields and comma lists alike) must be decimal
    /// digits, and all must be the same number.
    static func contentLength(_ headers: HTTPHeaders) throws(HTTP1ParseError) -> Int? {
        var length: Int?
        for index in headers.fields.indices
        where HTTPSyntax.equalsIgnoringASCIICase(headers.fields[index].name, "content-length") {
            var value = headers.fields[index].value
            switch value.withUTF8({ listedLength($0, agreeingWith: length) }) {
            case .number(let number): length = number
            case .notANumber:
                throw HTTP1ParseError(.badContentLength, "Content-Length \(HTTPSyntax.quoted(value)) is not a number")
            case .disagreement(let first, let second):
                throw HTTP1ParseError(.badContentLength, "Content-Length values \(first) and \(second) disagree")
            }
        }
        return length
    }

    /// What one Content-Length value says.
    private enum ListedLength {
        case number(Int)
        case notANumber
        case disagreement(Int, Int)
    }

    /// The number a Content-Length value's comma-separated elements all give, read in place (the value is read for
    /// every message): each element, without surrounding whitespace, must be decimal digits and equal to `length`
    /// and to the others.
    private static func listedLength(_ bytes: UnsafeBufferPointer<UInt8>, agreeingWith length: Int?) -> ListedLength {
        var length = length
        var start = 0
        while true {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
            guard let number = HTTPSyntax.decimalValue(HTTPSyntax.trimmingOWS(bytes[start..<end])) else {
                return .notANumber
            }
            if let length, length != number { return .disagreement(length, number) }
            length = number
            guard end < bytes.count else { return .number(number) }
            start = end + 1
        }
    }
}

extension HTTPResponseHead {
    /// Whether a body may follow this head: never for a response to HEAD, nor for 1xx, 204 and 304, whatever
    /// Content-Length or Transfer-Encoding say (RFC 9112 §6.3).
    public func mayHaveBody(toRequestMethod requestMethod: String?) -> Bool {
        !(requestMethod == "HEAD" || status < 200 || status == 204 || status == 304)
    }
}
