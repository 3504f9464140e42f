/// Parsing of single start lines and field lines (RFC 9112 §3, §4, §5); each function gets one line without its CRLF.
enum HTTP1LineSyntax {
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
    static func checkControlCharacters(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) {
        if let control = line.first(where: { !HTTPSyntax.isTextByte($0) }) {
            throw HTTP1ParseError(.badStartLine, "start line contains the control character \(HTTPSyntax.quoted([control]))")
        }
    }

    /// `method SP request-target SP HTTP-version`, single spaces only.
    static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> RequestLine {
        try checkControlCharacters(line)
        guard let firstSpace = line.firstIndex(of: HTTPSyntax.space) else {
            throw HTTP1ParseError(.badStartLine, "request line \(HTTPSyntax.quoted(line)) has no spaces")
        }
        let method = line[..<firstSpace]
        guard HTTPSyntax.isToken(method) else {
            throw HTTP1ParseError(.badStartLine, "method \(HTTPSyntax.quoted(method)) is not a token")
        }
        let afterMethod = line[(firstSpace + 1)...]
        guard let secondSpace = afterMethod.firstIndex(of: HTTPSyntax.space) else {
            throw HTTP1ParseError(.badStartLine, "request line \(HTTPSyntax.quoted(line)) has no HTTP version")
        }
        let target = afterMethod[..<secondSpace]
        guard !target.isEmpty, target.allSatisfy(HTTPSyntax.isVisibleASCII) else {
            throw HTTP1ParseError(.badStartLine, "request target \(HTTPSyntax.quoted(target)) is empty or has characters other than visible ASCII")
        }
        let versionBytes = afterMethod[(secondSpace + 1)...]
        if versionBytes.contains(HTTPSyntax.space) {
            throw HTTP1ParseError(.badStartLine, "request line \(HTTPSyntax.quoted(line)) has more than two spaces")
        }
        let version = try parseVersion(versionBytes, line: line)
        return RequestLine(
            method: String(decoding: method, as: UTF8.self),
            target: String(decoding: target, as: UTF8.self),
            version: version
        )
    }

    /// `HTTP-version SP 3DIGIT [SP reason-phrase]`; the space and reason may be missing.
    static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> StatusLine {
        try checkControlCharacters(line)
        let versionEnd = line.firstIndex(of: HTTPSyntax.space) ?? line.endIndex
        guard line.starts(with: "HTTP/".utf8) else {
            throw HTTP1ParseError(.badStartLine, "status line \(HTTPSyntax.quoted(line)) does not start with an HTTP version")
        }
        let version = try parseVersion(line[..<versionEnd], line: line)
        let statusStart = versionEnd + 1
        let statusEnd = statusStart + 3
        guard statusEnd <= line.endIndex,
              let status = HTTPSyntax.decimalValue(line[statusStart..<statusEnd]), status >= 100,
              statusEnd == line.endIndex || line[statusEnd] == HTTPSyntax.space else {
            throw HTTP1ParseError(.badStartLine, "status line \(HTTPSyntax.quoted(line)) has no three-digit status code")
        }
        let reason = statusEnd == line.endIndex ? line[statusEnd...] : line[(statusEnd + 1)...]
        guard reason.allSatisfy(HTTPSyntax.isTextByte) else {
            throw HTTP1ParseError(.badStartLine, "reason phrase \(HTTPSyntax.quoted(reason)) contains control characters")
        }
        return StatusLine(version: version, status: status, reason: HTTPSyntax.decodeText(reason))
    }

    /// `HTTP/1.0` or `HTTP/1.1`; any other `HTTP/…` is `badVersion`, anything else a bad start line.
    static func parseVersion(_ bytes: ArraySlice<UInt8>, line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> HTTPVersion {
        if bytes.elementsEqual("HTTP/1.1".utf8) { return .http1_1 }
        if bytes.elementsEqual("HTTP/1.0".utf8) { return .http1_0 }
        if bytes.starts(with: "HTTP/".utf8) {
            throw HTTP1ParseError(.badVersion, "HTTP version \(HTTPSyntax.quoted(bytes)) is not supported (only HTTP/1.0 and HTTP/1.1)")
        }
        throw HTTP1ParseError(.badStartLine, "start line \(HTTPSyntax.quoted(line)) has no valid HTTP version")
    }

    /// `field-name ":" OWS field-value OWS`; `place` names the line in error messages (`header line 3`).
    static func parseFieldLine(_ line: ArraySlice<UInt8>, place: @autoclosure () -> String) throws(HTTP1ParseError) -> HTTPHeaderField {
        guard let first = line.first else {
            throw HTTP1ParseError(.badHeader, "\(place()) is empty")
        }
        if HTTPSyntax.isOWS(first) {
            throw HTTP1ParseError(.badHeader, "\(place()) starts with whitespace (obsolete line folding is not accepted)")
        }
        guard let colon = line.firstIndex(of: HTTPSyntax.colon) else {
            throw HTTP1ParseError(.badHeader, "\(place()) has no colon")
        }
        let name = line[..<colon]
        if let last = name.last, HTTPSyntax.isOWS(last) {
            throw HTTP1ParseError(.badHeader, "\(place()) has whitespace between the field name and the colon")
        }
        guard HTTPSyntax.isToken(name) else {
            throw HTTP1ParseError(.badHeader, "\(place()) has an invalid field name \(HTTPSyntax.quoted(name))")
        }
        let value = HTTPSyntax.trimmingOWS(line[(colon + 1)...])
        guard value.allSatisfy(HTTPSyntax.isTextByte) else {
            throw HTTP1ParseError(.badHeader, "\(place()) (\(String(decoding: name, as: UTF8.self))) has a control character in its value")
        }
        return HTTPHeaderField(name: String(decoding: name, as: UTF8.self), valueBytes: value)
    }
}
