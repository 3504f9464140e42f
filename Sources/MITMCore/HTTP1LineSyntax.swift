#if canImport(Glibc)
import Glibc
#endif

/// Parsing of single start lines and field lines (RFC 9112 §3, §4, §5); each function gets one line without its CRLF,
/// as bytes lent from the parser's buffer (a head is parsed without copying its lines or retaining the buffer per line).
enum HTTP1LineSyntax {
    typealias Line = UnsafeBufferPointer<UInt8>

    /// A parsed request line.
    struct RequestLine: Equatable {
        var method: String
        var target: String
        var version: HTTPVersion
    }

    /// A parsed status line.
    struct StatusLine: Equatable {
        var version: HTTPVersion
        var status: Int
        var reason: String
    }

    /// The first line of a message.
    enum StartLine: Equatable {
        case request(RequestLine)
        case status(StatusLine)
    }

    /// Rejects control characters (HTAB aside, which only a reason phrase may hold) before the line is split.
    static func checkControlCharacters(_ line: Line) throws(HTTP1ParseError) {
        if let control = line.first(where: { !HTTPSyntax.isTextByte($0) }) {
            throw HTTP1ParseError(
                .badStartLine, "start line contains the control character \(HTTPSyntax.quoted([control]))")
        }
    }

    /// `method SP request-target SP HTTP-version`, single spaces only.
    static func parseRequestLine(_ line: Line) throws(HTTP1ParseError) -> RequestLine {
        try checkControlCharacters(line)
        guard let firstSpace = line.firstIndex(of: HTTPSyntax.space) else {
            throw HTTP1ParseError(.badStartLine, "request line \(HTTPSyntax.quoted(line)) has no spaces")
        }
        let method = Line(rebasing: line[..<firstSpace])
        guard HTTPSyntax.isToken(method) else {
            throw HTTP1ParseError(.badStartLine, "method \(HTTPSyntax.quoted(method)) is not a token")
        }
        guard let secondSpace = line[(firstSpace + 1)...].firstIndex(of: HTTPSyntax.space) else {
            throw HTTP1ParseError(.badStartLine, "request line \(HTTPSyntax.quoted(line)) has no HTTP version")
        }
        let target = Line(rebasing: line[(firstSpace + 1)..<secondSpace])
        guard !target.isEmpty, target.allSatisfy(HTTPSyntax.isVisibleASCII) else {
            throw HTTP1ParseError(
                .badStartLine,
                "request target \(HTTPSyntax.quoted(target)) is empty or has characters other than visible ASCII")
        }
        let versionBytes = Line(rebasing: line[(secondSpace + 1)...])
        if versionBytes.contains(HTTPSyntax.space) {
            throw HTTP1ParseError(.badStartLine, "request line \(HTTPSyntax.quoted(line)) has more than two spaces")
        }
        let version = try parseVersion(versionBytes, line: line)
        return RequestLine(
            method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self),
            version: version)
    }

    /// `HTTP-version SP 3DIGIT [SP reason-phrase]`; the space and reason may be missing.
    static func parseStatusLine(_ line: Line) throws(HTTP1ParseError) -> StatusLine {
        try checkControlCharacters(line)
        let versionEnd = line.firstIndex(of: HTTPSyntax.space) ?? line.endIndex
        guard HTTPSyntax.startsWith(line, "HTTP/") else {
            throw HTTP1ParseError(
                .badStartLine, "status line \(HTTPSyntax.quoted(line)) does not start with an HTTP version")
        }
        let version = try parseVersion(Line(rebasing: line[..<versionEnd]), line: line)
        let statusStart = versionEnd + 1
        let statusEnd = statusStart + 3
        guard statusEnd <= line.endIndex,
            let status = HTTPSyntax.decimalValue(Line(rebasing: line[statusStart..<statusEnd])), status >= 100,
            statusEnd == line.endIndex || line[statusEnd] == HTTPSyntax.space
        else {
            throw HTTP1ParseError(
                .badStartLine, "status line \(HTTPSyntax.quoted(line)) has no three-digit status code")
        }
        let reason = Line(rebasing: statusEnd == line.endIndex ? line[statusEnd...] : line[(statusEnd + 1)...])
        guard reason.allSatisfy(HTTPSyntax.isTextByte) else {
            throw HTTP1ParseError(
                .badStartLine, "reason phrase \(HTTPSyntax.quoted(reason)) contains control characters")
        }
        return StatusLine(version: version, status: status, reason: HTTPSyntax.decodeTextNotingUTF8(reason).text)
    }

    /// `HTTP/1.0` or `HTTP/1.1`; any other `HTTP/…` is `badVersion`, anything else a bad start line.
    static func parseVersion(_ bytes: Line, line: Line) throws(HTTP1ParseError) -> HTTPVersion {
        if bytes.count == 8 && HTTPSyntax.startsWith(bytes, "HTTP/1.") {
            if bytes[7] == UInt8(ascii: "1") { return .http1_1 }
            if bytes[7] == UInt8(ascii: "0") { return .http1_0 }
        }
        if HTTPSyntax.startsWith(bytes, "HTTP/") {
            throw HTTP1ParseError(
                .badVersion, "HTTP version \(HTTPSyntax.quoted(bytes)) is not supported (only HTTP/1.0 and HTTP/1.1)")
        }
        throw HTTP1ParseError(.badStartLine, "start line \(HTTPSyntax.quoted(line)) has no valid HTTP version")
    }

    /// `field-name ":" OWS field-value OWS`; `place` names the line in error messages (`header line 3`).
    static func parseFieldLine(_ line: Line, place: @autoclosure () -> String) throws(HTTP1ParseError)
        -> HTTPHeaderField
    {
        let field = try splitFieldLine(line, place: place())
        return HTTPHeaderField(name: fieldName(field.name), valueBytes: field.value, isASCII: field.isASCII)
    }

    /// A field line checked and split into its name and its value without surrounding whitespace (`isASCII`: the
    /// value's bytes are all ASCII), both lent from `line`.
    static func splitFieldLine(_ line: Line, place: @autoclosure () -> String) throws(HTTP1ParseError)
        -> (name: Line, value: Line, isASCII: Bool)
    {
        // One pass over the name: token bytes up to the colon is a valid name; anything else is some error.
        var colon = 0
        while colon < line.count, HTTPSyntax.isTokenByte(line[colon]) { colon += 1 }
        guard colon > 0, colon < line.count, line[colon] == HTTPSyntax.colon else {
            throw fieldNameError(line, place: place())
        }
        let name = Line(rebasing: line[..<colon])
        let value = Line(rebasing: HTTPSyntax.trimmingOWS(line[(colon + 1)...]))
        var isASCII = true
        if !HTTPSyntax.isPrintableASCII(value) {
            for byte in value {
                guard HTTPSyntax.isTextByte(byte) else {
                    throw HTTP1ParseError(
                        .badHeader,
                        "\(place()) (\(String(decoding: name, as: UTF8.self))) has a control character in its value")
                }
                if byte >= 0x80 { isASCII = false }
            }
        }
        return (name, value, isASCII)
    }

    /// What is wrong with the name part of a field line whose name is not all token bytes up to a colon.
    private static func fieldNameError(_ line: Line, place: String) -> HTTP1ParseError {
        guard let first = line.first else {
            return HTTP1ParseError(.badHeader, "\(place) is empty")
        }
        if HTTPSyntax.isOWS(first) {
            return HTTP1ParseError(
                .badHeader, "\(place) starts with whitespace (obsolete line folding is not accepted)")
        }
        guard let colon = line.firstIndex(of: HTTPSyntax.colon) else {
            return HTTP1ParseError(.badHeader, "\(place) has no colon")
        }
        let name = Line(rebasing: line[..<colon])
        if let last = name.last, HTTPSyntax.isOWS(last) {
            return HTTP1ParseError(.badHeader, "\(place) has whitespace between the field name and the colon")
        }
        return HTTP1ParseError(.badHeader, "\(place) has an invalid field name \(HTTPSyntax.quoted(name))")
    }

    /// The name as a String: one of `commonFieldNames` when spelled exactly so, without making and checking a new one.
    static func fieldName(_ bytes: Line) -> String {
        if bytes.count < commonFieldNamesByLength.count {
            for (spelling, name) in commonFieldNamesByLength[bytes.count]
            where memcmp(spelling.utf8Start, bytes.baseAddress!, bytes.count) == 0 {
                return name
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Field names most requests and responses carry, as browsers, curl, nginx and common frameworks spell them.
    private static let commonFieldNames: [StaticString] = [
        "Host", "Date", "ETag", "Vary", "Accept", "Server", "Cookie", "Origin", "Pragma", "Expires", "Referer",
        "Location",
        "Connection", "Set-Cookie", "User-Agent", "Keep-Alive", "Content-Type", "Cache-Control", "Last-Modified",
        "Accept-Ranges",
        "Authorization", "Content-Length", "Accept-Encoding", "Accept-Language", "Content-Encoding",
        "Transfer-Encoding",
        "If-None-Match", "If-Modified-Since", "Upgrade", "Age", "Via", "X-Forwarded-For", "X-Requested-With",
        "Access-Control-Allow-Origin", "Strict-Transport-Security", "Content-Security-Policy", "X-Content-Type-Options",
        "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest", "Upgrade-Insecure-Requests",
    ]

    /// `commonFieldNames` by their length in bytes, each with its String.
    private static let commonFieldNamesByLength: [[(StaticString, String)]] = {
        var byLength = [[(StaticString, String)]](
            repeating: [], count: (commonFieldNames.map(\.utf8CodeUnitCount).max() ?? 0) + 1)
        for name in commonFieldNames { byLength[name.utf8CodeUnitCount].append((name, name.description)) }
        return byLength
    }()
}
