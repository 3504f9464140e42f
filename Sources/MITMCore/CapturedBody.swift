import Foundation

/// The first bytes of a message body kept for the record (HAR), with the full size relayed.
/// Bodies are streamed through the proxy untouched; only up to `limit` bytes are copied here.
public struct CapturedBody: Sendable, Equatable {
    /// The kept bytes (at most `limit`).
    public private(set) var bytes: [UInt8] = []
    /// How many bytes to keep; 0 keeps nothing.
    public let limit: Int
    /// The body's full size as relayed (decoded from chunked framing).
    public private(set) var totalSize = 0

    /// An empty capture keeping at most `limit` bytes.
    public init(limit: Int = 0) { self.limit = limit }

    /// Whether bytes beyond `limit` were relayed but not kept.
    public var isTruncated: Bool { totalSize > bytes.count }

    /// The same body keeping at most `limit` bytes (for a record that captured more than the HAR keeps).
    public func limited(to limit: Int) -> CapturedBody {
        guard limit < self.limit else { return self }
        var copy = CapturedBody(limit: max(0, limit))
        copy.bytes = Array(bytes.prefix(copy.limit))
        copy.totalSize = totalSize
        return copy
    }

    /// Gives back room the kept bytes grew into but do not use (more than an eighth of them: what the allocator
    /// rounds up is not worth a copy).
    public mutating func shrinkToFit() {
        guard bytes.capacity - bytes.count > bytes.count / 8 else { return }
        bytes = bytes.withUnsafeBufferPointer { Array($0) }
    }

    /// Makes room at once for the bytes of a body that announced `size` (its `Content-Length`), so that keeping
    /// them does not grow the array in steps, each a copy and a freed block.
    public mutating func expect(size: @autoclosure () -> Int?) {
        guard limit > 0, bytes.isEmpty, let size = size(), size > 0 else { return }
        bytes.reserveCapacity(min(limit, size))
    }

    /// Counts `piece` and keeps what fits under the limit.
    public mutating func append(_ piece: [UInt8]) {
        piece.withUnsafeBytes { append($0) }
    }

    /// Counts `piece` and copies only what fits under the limit.
    public mutating func append(_ piece: UnsafeRawBufferPointer) {
        totalSize += piece.count
        let room = limit - bytes.count
        guard room > 0 else { return }
        growUpToTheLimit(toKeep: min(room, piece.count))
        bytes.append(contentsOf: piece.prefix(room))
    }

    /// Doubles the room as an array does, but never past `limit`: a body of unknown size that reaches the limit
    /// holds no room it will not use.
    private mutating func growUpToTheLimit(toKeep count: Int) {
        let needed = bytes.count + count
        guard needed > bytes.capacity else { return }
        bytes.reserveCapacity(min(limit, max(needed, 2 * bytes.capacity)))
    }

    /// Counts `count` bytes that were relayed but are not to be kept (the limit is already reached).
    public mutating func skip(_ count: Int) {
        totalSize += count
    }

    /// Whether another byte would still be kept.
    public var hasRoom: Bool { bytes.count < limit }
}

/// HAR-style phase timings of one exchange, in milliseconds; -1 where a phase did not apply
/// (a reused connection has no dns/connect/ssl).
public struct ExchangeTimings: Sendable, Equatable {
    public var dns: Double = -1
    public var connect: Double = -1
    public var ssl: Double = -1
    public var send: Double = 0
    public var wait: Double = 0
    public var receive: Double = 0

    /// All phases unknown/zero.
    public init() {}
}

extension ExchangeRecord {
    /// Ends the exchange at `end`, filling send/wait/receive from when the request was fully sent and
    /// when the response began (either unknown: the phase collapses to zero).
    public mutating func complete(at end: Date, requestEnded: Date?, responseStarted: Date?) {
        finished = end
        let sent = requestEnded ?? started
        let firstByte = responseStarted ?? end
        timings.send = max(0, sent.timeIntervalSince(started) * 1000)
        timings.wait = max(0, firstByte.timeIntervalSince(sent) * 1000)
        timings.receive = max(0, end.timeIntervalSince(firstByte) * 1000)
    }
}
