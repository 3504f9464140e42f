/// An incremental HTTP/1.0 and HTTP/1.1 parser for one direction of one connection: bytes in, events out, no I/O.
///
/// Feed bytes as they arrive; each call returns the events completed by them, in order, for any number of pipelined
/// messages. Body bytes are handed out as they arrive, never buffered whole. After a CONNECT or Upgrade request, or a
/// 101 or 2xx-to-CONNECT response, the parser pauses: further bytes are only kept, for `takeBufferedBytes()` (tunnel)
/// or `resume()` (the upgrade was refused). After an error the parser is spent: every later call throws the same error.
public struct HTTP1Parser: Sendable {
    /// Which side's messages this parser reads.
    public enum Role: Sendable {
        /// Reads requests (a client's bytes).
        case request
        /// Reads responses (a server's bytes); tell it each request's method with `expectResponse(toMethod:)`.
        case response
    }

    enum Phase: Equatable {
        case head
        case fixedBody(remaining: Int)
        case chunkSizeLine
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case closeDelimitedBody
    }

    /// Which side's messages this parser reads.
    public let role: Role
    /// The most bytes a head (start line, fields and the blank line) may take; the same bound applies to a trailer block.
    public let maxHeaderBytes: Int
    /// The most bytes a chunk-size line, extensions and CRLF included, may take.
    static let maxChunkSizeLineBytes = 1024
    /// Consumed bytes are dropped from the front of the buffer only once there are at least this many of them.
    static let compactionThreshold = 16_384

    var buffer: [UInt8] = []
    var readIndex = 0
    var phase = Phase.head
    var paused = false
    var pauseAfterMessage = false
    var failure: HTTP1ParseError?
    var expectedMethods: [String] = []

    /// How many bytes after `readIndex` are already known to hold no LF, so a partial line is never scanned twice.
    var scannedWithoutNewline = 0
    /// Bytes of the current head or trailer block consumed so far.
    var blockBytes = 0
    var blockLines = 0
    var startLine: HTTP1LineSyntax.StartLine?
    var fields: [HTTPHeaderField] = []
    /// The fields of the last head read, whose strings the next head's same fields share (`previousField(spelling:)`).
    var previousFields: [HTTPHeaderField] = []
    /// The bytes of the head being completed, when it was read in one piece (`HTTPRequestHead.parsedFrom`).
    var headBytes: [UInt8]?

    /// A parser for `role` whose heads may be at most `maxHeaderBytes` long.
    public init(role: Role, maxHeaderBytes: Int = 65_536) {
        self.role = role
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Records that a request with `method` was sent, so its response is framed right (a response to HEAD has no
    /// body, a 2xx to CONNECT opens a tunnel). Call once per request, in sending order.
    public mutating func expectResponse(toMethod method: String) {
        expectedMethods.append(method)
    }

    /// Parses `bytes` and returns the events they complete. On a thrown error, events completed earlier in the same
    /// call are dropped: answer with the error's `suggestedStatus` and close the connection.
    public mutating func feed(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> [HTTP1Event] {
        let result = bytes.withUnsafeBytes { bytes in Result { () throws(HTTP1ParseError) in try feed(bytes) } }
        return try result.get()
    }

    /// Parses `bytes` (read straight from a socket or a TLS record, copied only where kept) and returns the events
    /// they complete.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(HTTP1ParseError) -> [HTTP1Event] {
        if let failure { throw failure }
        var events: [HTTP1Event] = []
        // A read often completes a whole message (head, body, end): one allocation instead of one per doubling.
        events.reserveCapacity(4)
        var input = UnsafeBufferPointer(
            start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        if !paused && readIndex == buffer.count {
            takeBodyDirectly(from: &input, into: &events)
        }
        appendToBuffer(input)
        try run(into: &events)
        return events
    }

    /// Parses `bytes` and returns the events they complete.
    public mutating func feed(_ bytes: [UInt8]) throws(HTTP1ParseError) -> [HTTP1Event] {
        try feed(bytes[...])
    }

    /// The peer closed its side: ends a close-delimited response body. Throws `truncated` in the middle of a message;
    /// returns no events when idle or paused.
    public mutating func finish() throws(HTTP1ParseError) -> [HTTP1Event] {
        if let failure { throw failure }
        if paused { return [] }
        let reason: String
        switch phase {
        case .head:
            if startLine == nil && readIndex == buffer.count { return [] }
            reason = "connection closed in the middle of a message head"
        case .closeDelimitedBody:
            var events: [HTTP1Event] = []
            endMessage(trailers: nil, into: &events)
            return events
        case .fixedBody(let remaining):
            reason = "connection closed with \(remaining) bytes of the body missing"
        case .chunkSizeLine, .chunkData, .chunkDataEnd, .trailers:
            reason = "connection closed in the middle of a chunked body"
        }
        throw fail(HTTP1ParseError(.truncated, reason))
    }

    /// Whether parsing stopped after a CONNECT, Upgrade, 101 or 2xx-to-CONNECT message.
    public var isPaused: Bool { paused }

    /// Continues parsing HTTP from the bytes kept while paused (for example when an upgrade was refused).
    public mutating func resume() throws(HTTP1ParseError) -> [HTTP1Event] {
        if let failure { throw failure }
        paused = false
        var events: [HTTP1Event] = []
        try run(into: &events)
        return events
    }

    /// Hands over and forgets the bytes not parsed yet: after a pause, the first bytes of the tunnel or upgraded protocol.
    /// No head follows, so the last head's fields are let go too (a CONNECT's would stay as long as its tunnel).
    public mutating func takeBufferedBytes() -> [UInt8] {
        previousFields = []
        let bytes = Array(buffer[readIndex...])
        buffer.removeAll()
        readIndex = 0
        scannedWithoutNewline = 0
        return bytes
    }

    /// Whether the parser is between messages, not paused, with nothing buffered.
    public var isIdle: Bool {
        !paused && phase == .head && startLine == nil && readIndex == buffer.count
    }

    /// How many of the next bytes are plain body bytes (inside a Content-Length body, or a close-delimited one) while
    /// nothing is buffered: a caller may relay that many itself and pass them to `skipBody(_:)`, with no copy and no
    /// event. 0 otherwise (a head, chunk framing, bytes kept from before, a pause, a failure).
    public var directBodyBytes: Int {
        guard !paused, failure == nil, readIndex == buffer.count else { return 0 }
        switch phase {
        case .fixedBody(let remaining): return remaining
        case .closeDelimitedBody: return Int.max
        case .head, .chunkSizeLine, .chunkData, .chunkDataEnd, .trailers: return 0
        }
    }

    /// Consumes `count` body bytes (at most `directBodyBytes`) that the caller relayed itself; returns the events they
    /// complete: the message's `.end` when they were the last bytes of its body.
    public mutating func skipBody(_ count: Int) -> [HTTP1Event] {
        precondition(count <= directBodyBytes, "skipBody beyond the direct body bytes")
        guard case .fixedBody(let remaining) = phase else { return [] }
        guard count == remaining else {
            phase = .fixedBody(remaining: remaining - count)
            return []
        }
        var events: [HTTP1Event] = []
        endMessage(trailers: nil, into: &events)
        return events
    }

    /// Whether part of a head has arrived and the rest has not.
    public var isReadingHead: Bool {
        !paused && phase == .head && (startLine != nil || readIndex < buffer.count)
    }

    /// How many received bytes are kept and not parsed yet.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Gives back the buffer's memory when nothing in it is waiting to be parsed (a connection gone idle).
    public mutating func releaseIdleBuffer() {
        guard readIndex == buffer.count else { return }
        previousFields = []
        guard buffer.capacity > 0 else { return }
        buffer = []
        readIndex = 0
    }
}

extension HTTP1Parser {
    var available: Int { buffer.count - readIndex }

    private mutating func fail(_ error: HTTP1ParseError) -> HTTP1ParseError {
        var error = error
        if role == .response { error.suggestedStatus = 502 }
        failure = error
        return error
    }

    private mutating func appendToBuffer(_ bytes: UnsafeBufferPointer<UInt8>) {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex >= Self.compactionThreshold && readIndex >= buffer.count / 2 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// With nothing buffered, body bytes that need no look-ahead go from the input straight into an event, skipping the
    /// copy into the buffer.
    private mutating func takeBodyDirectly(
        from input: inout UnsafeBufferPointer<UInt8>, into events: inout [HTTP1Event]
    ) {
        guard !input.isEmpty else { return }
        switch phase {
        case .fixedBody(let remaining):
            let count = min(remaining, input.count)
            events.append(.body(Array(input.prefix(count))))
            input = UnsafeBufferPointer(rebasing: input.dropFirst(count))
            if count == remaining {
                endMessage(trailers: nil, into: &events)
            } else {
                phase = .fixedBody(remaining: remaining - count)
            }
        case .chunkData(let remaining):
            let count = min(remaining, input.count)
            events.append(.body(Array(input.prefix(count))))
            input = UnsafeBufferPointer(rebasing: input.dropFirst(count))
            phase = count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - count)
        case .closeDelimitedBody:
            events.append(.body(Array(input)))
            input = UnsafeBufferPointer(rebasing: input[input.endIndex...])
        case .head, .chunkSizeLine, .chunkDataEnd, .trailers:
            break
        }
    }

    /// Parses as far as the buffered bytes go, stopping early when paused.
    private mutating func run(into events: inout [HTTP1Event]) throws(HTTP1ParseError) {
        do throws(HTTP1ParseError) {
            while !paused, try step(into: &events) {}
        } catch {
            throw fail(error)
        }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
    }

    /// Advances by one parsing step; false when more bytes are needed.
    private mutating func step(into events: inout [HTTP1Event]) throws(HTTP1ParseError) -> Bool {
        switch phase {
        case .head:
            guard let startLine = try readHeadLines() else { return false }
            try completeHead(startLine, into: &events)
            return true
        case .fixedBody(let remaining):
            let count = takeBody(upTo: remaining, into: &events)
            if count == 0 { return false }
            if count == remaining {
                endMessage(trailers: nil, into: &events)
            } else {
                phase = .fixedBody(remaining: remaining - count)
            }
            return true
        case .closeDelimitedBody:
            return takeBody(upTo: available, into: &events) > 0
        case .chunkSizeLine:
            guard let size = try readChunkSizeLine() else { return false }
            if size == 0 {
                startBlock()
                phase = .trailers
            } else {
                phase = .chunkData(remaining: size)
            }
            return true
        case .chunkData(let remaining):
            let count = takeBody(upTo: remaining, into: &events)
            if count == 0 { return false }
            phase = count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            return true
        case .chunkDataEnd:
            guard try readChunkDataEnd() else { return false }
            phase = .chunkSizeLine
            return true
        case .trailers:
            guard try readTrailerLines() else { return false }
            endMessage(trailers: fields.isEmpty ? nil : HTTPHeaders(fields), into: &events)
            return true
        }
    }

    /// Emits up to `limit` buffered bytes as one body event; returns how many.
    private mutating func takeBody(upTo limit: Int, into events: inout [HTTP1Event]) -> Int {
        let count = min(limit, available)
        guard count > 0 else { return 0 }
        events.append(.body(Array(buffer[readIndex..<(readIndex + count)])))
        readIndex += count
        return count
    }

    mutating func endMessage(trailers: HTTPHeaders?, into events: inout [HTTP1Event]) {
        events.append(.end(trailers: trailers))
        phase = .head
        startBlock()
        startLine = nil
        if pauseAfterMessage {
            pauseAfterMessage = false
            paused = true
        }
    }

    mutating func startBlock() {
        blockBytes = 0
        blockLines = 0
        fields = []
    }
}
