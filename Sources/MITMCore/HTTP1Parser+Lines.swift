#if canImport(Glibc)
import Glibc
#endif

/// The line-oriented parts of HTTP/1: heads, chunk-size lines, the CRLF after chunk data, and trailers.
extension HTTP1Parser {
    /// The next complete line in `bytes` (the buffer, lent): its content's range without the line end, its length
    /// with it, and whether it ended in a bare LF; nil if no LF has arrived yet. Bytes already searched are not
    /// searched again on the next call.
    mutating func nextLine(in bytes: UnsafeBufferPointer<UInt8>) -> (content: Range<Int>, length: Int, bareLF: Bool)? {
        let from = readIndex + scannedWithoutNewline
        guard from < bytes.count, let base = bytes.baseAddress,
            let found = memchr(base + from, Int32(HTTPSyntax.lf), bytes.count - from)
        else {
            scannedWithoutNewline = bytes.count - readIndex
            return nil
        }
        let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        let bareLF = newline == readIndex || bytes[newline - 1] != HTTPSyntax.cr
        let content = readIndex..<(bareLF ? newline : newline - 1)
        let length = newline + 1 - readIndex
        readIndex = newline + 1
        scannedWithoutNewline = 0
        return (content, length, bareLF)
    }

    /// The next complete line as bytes of the buffer (see `nextLine(in:)`); for the chunk framing lines.
    mutating func takeLine() -> (content: ArraySlice<UInt8>, length: Int, bareLF: Bool)? {
        let bytes = buffer
        guard let line = bytes.withUnsafeBufferPointer({ nextLine(in: $0) }) else { return nil }
        return (bytes[line.content], line.length, line.bareLF)
    }

    /// Refuses a line that ended in a bare LF (RFC 9112 §2.2 only allows accepting one): a hop in front of the proxy
    /// that does not end lines there would see other fields, or another chunk, than the proxy does. Called after the
    /// line's length is checked, so an over-long block is refused the same way however the bytes were split.
    static func refuseBareLF(_ bareLF: Bool, _ kind: HTTP1ParseError.Kind, in what: String) throws(HTTP1ParseError) {
        if bareLF {
            throw HTTP1ParseError(kind, "a line of the \(what) ends in a bare LF, not CRLF")
        }
    }

    /// Reads the start line and field lines that have arrived; returns the start line once the blank line ending the
    /// head is read. Empty lines before the start line are skipped.
    mutating func readHeadLines() throws(HTTP1ParseError) -> HTTP1LineSyntax.StartLine? {
        // Held in a local for the scan: the lines are parsed in place while the fields and counters of `self` change.
        let buffer = buffer
        // Where the start line began, when it is read in this scan (the buffer does not move during one).
        var headStart: Int?
        return try buffer.withUnsafeBufferPointer { (bytes) throws(HTTP1ParseError) -> HTTP1LineSyntax.StartLine? in
            while true {
                guard let (range, length, bareLF) = nextLine(in: bytes) else {
                    try checkBlockLimit(pending: available, what: "message head")
                    return nil
                }
                let line = UnsafeBufferPointer(rebasing: bytes[range])
                guard let startLine else {
                    if line.isEmpty && !bareLF { continue }
                    try countBlockLine(length, what: "message head")
                    try Self.refuseBareLF(bareLF, .badStartLine, in: "message head")
                    switch role {
                    case .request: startLine = .request(try HTTP1LineSyntax.parseRequestLine(line))
                    case .response: startLine = .status(try HTTP1LineSyntax.parseStatusLine(line))
                    }
                    headStart = range.lowerBound
                    // One allocation for the head, as many fields as the connection's last head had (a connection's
                    // heads mostly have the same fields): a record kept in the flow list then holds no spare room,
                    // and needs no copy to drop it.
                    fields.reserveCapacity(previousFields.isEmpty ? 16 : previousFields.count)
                    continue
                }
                try countBlockLine(length, what: "message head")
                try Self.refuseBareLF(bareLF, .badHeader, in: "message head")
                if line.isEmpty {
                    // A head that arrived in one piece is kept as it came, to be forwarded unchanged without being
                    // written again.
                    if let headStart { headBytes = Array(UnsafeBufferPointer(rebasing: bytes[headStart..<readIndex])) }
                    return startLine
                }
                blockLines += 1
                let field = try HTTP1LineSyntax.splitFieldLine(line, place: "header line \(blockLines)")
                fields.append(
                    previousField(spelling: field)
                        ?? HTTPHeaderField(
                            name: HTTP1LineSyntax.fieldName(field.name), valueBytes: field.value,
                            isASCII: field.isASCII))
            }
        }
    }

    /// The field at the same place in the previous head when this line spells it again byte for byte: a
    /// connection's heads repeat most of their fields (`Host`, `User-Agent`, `Content-Type`, `Server`), and the
    /// repeated field shares the previous one's strings instead of allocating and checking new ones.
    private func previousField(
        spelling field: (name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, isASCII: Bool)
    ) -> HTTPHeaderField? {
        let index = blockLines - 1
        guard field.isASCII, index < previousFields.count else { return nil }
        return previousFields.withUnsafeBufferPointer { previous in
            previous[index].spells(name: field.name, value: field.value) ? previous[index] : nil
        }
    }

    /// Reads the trailer field lines that have arrived; true once the blank line ending them is read.
    mutating func readTrailerLines() throws(HTTP1ParseError) -> Bool {
        let buffer = buffer
        return try buffer.withUnsafeBufferPointer { (bytes) throws(HTTP1ParseError) -> Bool in
            while true {
                guard let (range, length, bareLF) = nextLine(in: bytes) else {
                    try checkBlockLimit(pending: available, what: "trailer section")
                    return false
                }
                try countBlockLine(length, what: "trailer section")
                try Self.refuseBareLF(bareLF, .badHeader, in: "trailer section")
                if range.isEmpty { return true }
                blockLines += 1
                fields.append(
                    try HTTP1LineSyntax.parseFieldLine(
                        UnsafeBufferPointer(rebasing: bytes[range]),
                        place: "trailer line \(blockLines)"))
            }
        }
    }

    /// Throws when an unfinished line already makes the block too long: finishing it takes at least one more byte.
    /// Mutating only so that the parsing closures call it on the parser in place instead of on a copy.
    private mutating func checkBlockLimit(pending: Int, what: String) throws(HTTP1ParseError) {
        if blockBytes + pending >= maxHeaderBytes {
            throw HTTP1ParseError(.headersTooLarge, "\(what) is longer than \(maxHeaderBytes) bytes")
        }
    }

    private mutating func countBlockLine(_ length: Int, what: String) throws(HTTP1ParseError) {
        blockBytes += length
        if blockBytes > maxHeaderBytes {
            throw HTTP1ParseError(.headersTooLarge, "\(what) is longer than \(maxHeaderBytes) bytes")
        }
    }

    /// Reads `chunk-size [chunk-ext] CRLF`; returns the size, or nil if the line has not fully arrived.
    mutating func readChunkSizeLine() throws(HTTP1ParseError) -> Int? {
        let limit = Self.maxChunkSizeLineBytes
        guard let (line, length, bareLF) = takeLine() else {
            if available >= limit {
                throw HTTP1ParseError(.badChunk, "chunk size line is longer than \(limit) bytes")
            }
            return nil
        }
        if length > limit {
            throw HTTP1ParseError(.badChunk, "chunk size line is longer than \(limit) bytes")
        }
        try Self.refuseBareLF(bareLF, .badChunk, in: "chunked body")
        var size = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = HTTPSyntax.hexDigitValue(line[index]) {
            guard size <= (Int.max - digit) / 16 else {
                throw HTTP1ParseError(.badChunk, "chunk size \(HTTPSyntax.quoted(line)) is too large")
            }
            size = size * 16 + digit
            index += 1
        }
        if index == line.startIndex {
            throw HTTP1ParseError(
                .badChunk, "chunk size line \(HTTPSyntax.quoted(line)) does not start with a hex number")
        }
        let rest = line[index...].drop(while: HTTPSyntax.isOWS)
        if rest.isEmpty && index < line.endIndex {
            throw HTTP1ParseError(
                .badChunk, "chunk size line \(HTTPSyntax.quoted(line)) has whitespace after the size and no extension")
        }
        if let first = rest.first {
            guard first == UInt8(ascii: ";") else {
                throw HTTP1ParseError(.badChunk, "chunk size line \(HTTPSyntax.quoted(line)) has junk after the size")
            }
            guard rest.allSatisfy(HTTPSyntax.isTextByte) else {
                throw HTTP1ParseError(
                    .badChunk, "chunk extension in \(HTTPSyntax.quoted(line)) contains control characters")
            }
        }
        return size
    }

    /// Reads the CRLF that must follow chunk data; false if it has not fully arrived.
    mutating func readChunkDataEnd() throws(HTTP1ParseError) -> Bool {
        guard available > 0 else { return false }
        guard buffer[readIndex] == HTTPSyntax.cr else {
            throw HTTP1ParseError(.badChunk, "chunk data is not followed by CRLF")
        }
        guard available > 1 else { return false }
        guard buffer[readIndex + 1] == HTTPSyntax.lf else {
            throw HTTP1ParseError(.badChunk, "chunk data is not followed by CRLF")
        }
        readIndex += 2
        return true
    }

    /// Emits the head just read and sets up reading its body.
    mutating func completeHead(_ line: HTTP1LineSyntax.StartLine, into events: inout [HTTP1Event])
        throws(HTTP1ParseError)
    {
        let headers = HTTPHeaders(fields)
        previousFields = fields
        let parsedFrom = headBytes
        headBytes = nil
        let framing: HTTP1BodyFraming
        switch line {
        case .request(let requestLine):
            var head = HTTPRequestHead(
                method: requestLine.method, target: requestLine.target, version: requestLine.version, headers: headers)
            head.parsedFrom = parsedFrom
            // A target the proxy and the origin could resolve differently (userinfo, a fragment, a foreign scheme) is
            // refused here, whatever relays it next; CONNECT targets are judged where the tunnel is opened.
            if requestLine.method != "CONNECT" {
                _ = try RequestTarget.parse(requestLine.target, method: requestLine.method)
            }
            (framing, pauseAfterMessage) = try HTTP1Framing.request(head)
            events.append(.requestHead(head, framing: framing))
        case .status(let statusLine):
            var head = HTTPResponseHead(
                version: statusLine.version, status: statusLine.status, reason: statusLine.reason, headers: headers)
            head.parsedFrom = parsedFrom
            let isInterim = head.status < 200 && head.status != 101
            (framing, pauseAfterMessage) = try HTTP1Framing.response(
                head, requestMethod: isInterim ? nil : expectedMethods.first)
            if !isInterim && !expectedMethods.isEmpty {
                expectedMethods.removeFirst()
            }
            events.append(.responseHead(head, framing: framing))
        }
        startLine = nil
        switch framing {
        case .none: endMessage(trailers: nil, into: &events)
        case .contentLength(let length): phase = .fixedBody(remaining: length)
        case .chunked: phase = .chunkSizeLine
        case .closeDelimited: phase = .closeDelimitedBody
        }
    }
}
