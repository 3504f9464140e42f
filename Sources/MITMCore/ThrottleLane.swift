/// One direction of a throttled connection, sans-io: bytes go in as they are read or written, and come
/// out no earlier than the one-way delay after they went in, no faster than the bandwidth (a token
/// bucket), with loss as retransmission stalls (see `NetworkConditions`). The owner calls
/// `release(now:random:)` when `nextWake(now:)` says, and stops feeding while `isFull`.
public struct ThrottleLane: Sendable {
    /// Bytes per second; nil for no limit.
    public let bytesPerSecond: Double?
    /// Nanoseconds each byte is held at least.
    public let delay: UInt64
    /// Probability that a segment stalls for `retransmissionTimeout`.
    public let loss: Double
    /// Nanoseconds a lost segment is held.
    public let retransmissionTimeout: UInt64
    /// Bytes held before the feeder should pause: enough for the bandwidth over the delay and a tenth of a
    /// second more, so the link stays busy, and never a whole large body.
    public let limit: Int
    /// The most bytes one release hands out (a slow link still moves whole segments, never single bytes).
    let quantum: Int
    /// Tokens the bucket holds at most.
    let burst: Double

    /// A TCP segment's payload: the unit loss applies to.
    public static let segment = 1_460

    private var pieces: [(due: UInt64, bytes: [UInt8])] = []
    private var headOffset = 0
    private var tokens: Double
    private var refilledAt: UInt64?
    private var stalledUntil: UInt64 = 0
    private var endDue: UInt64?
    /// Bytes held now.
    public private(set) var queuedBytes = 0

    /// Bytes held at most whatever the bandwidth and delay, like a TCP window: beyond it a link's bandwidth-delay
    /// product is not kept in memory (the feeder waits instead).
    static let largestLimit = 64 * 1024 * 1024

    /// A lane of `bytesPerSecond` (nil: unlimited), holding each byte `oneWayDelay` seconds, with `loss`. Any values
    /// make a working lane (the parsers refuse those outside `NetworkConditions`' ranges; code may pass anything):
    /// times and sizes too large for an integer saturate.
    public init(bytesPerSecond: Double?, oneWayDelay: Double, loss: Double) {
        self.bytesPerSecond = bytesPerSecond
        delay = Self.saturating(max(0, oneWayDelay) * 1e9)
        self.loss = loss
        retransmissionTimeout = Self.saturating(max(0.2, 4 * oneWayDelay) * 1e9)
        if let rate = bytesPerSecond {
            limit = Int(max(16 * 1024, min(Double(Self.largestLimit), rate * (max(0, oneWayDelay) + 0.1))))
            burst = max(Double(2 * Self.segment), rate * 0.02)
            quantum = Int(max(Double(Self.segment), min(64 * 1024, burst / 2)))
        } else {
            limit = 512 * 1024
            burst = .infinity
            quantum = 64 * 1024
        }
        tokens = burst
    }

    /// Whether nothing is held.
    public var isEmpty: Bool { queuedBytes == 0 }

    /// Whether the feeder should stop until some bytes have left.
    public var isFull: Bool { queuedBytes >= limit }

    /// Takes `bytes` in at `now`.
    public mutating func enqueue(_ bytes: [UInt8], now: UInt64) {
        guard !bytes.isEmpty else { return }
        pieces.append((now &+ delay, bytes))
        queuedBytes += bytes.count
    }

    /// The input ended at `now`: `endIsDue` says when the end has crossed the link, after every byte.
    public mutating func markEnd(now: UInt64) {
        if endDue == nil { endDue = now &+ delay }
    }

    /// Whether the end went in and has crossed the link (everything before it has been released).
    public func endIsDue(now: UInt64) -> Bool {
        guard let endDue, isEmpty else { return false }
        return now >= endDue
    }

    /// The bytes that may leave at `now` (possibly none). `random` returns numbers in 0..<1.
    public mutating func release(now: UInt64, random: () -> Double) -> [UInt8] {
        refill(now: now)
        guard now >= stalledUntil else { return [] }
        var out: [UInt8] = []
        while let head = pieces.first, head.due <= now, out.count < quantum {
            let take = min(head.bytes.count - headOffset, Self.segment, quantum - out.count)
            if bytesPerSecond != nil && tokens < Double(take) { break }
            if loss > 0, random() < loss {
                stalledUntil = now &+ retransmissionTimeout
                break
            }
            out.append(contentsOf: head.bytes[headOffset..<(headOffset + take)])
            headOffset += take
            queuedBytes -= take
            if bytesPerSecond != nil { tokens -= Double(take) }
            if headOffset == head.bytes.count {
                pieces.removeFirst()
                headOffset = 0
            }
        }
        return out
    }

    /// When `release` may next hand out bytes (or the end become due), if anything is waiting.
    public func nextWake(now: UInt64) -> UInt64? {
        guard let head = pieces.first else {
            guard let endDue else { return nil }
            return max(endDue, now)
        }
        var wake = max(head.due, stalledUntil, now)
        if let rate = bytesPerSecond {
            let wanted = Double(min(head.bytes.count - headOffset, Self.segment))
            let current = min(burst, tokens + Double(now &- (refilledAt ?? now)) / 1e9 * rate)
            if current < wanted {
                let waitNanos = Self.saturating(((wanted - current) / rate * 1e9).rounded(.up))
                wake = max(wake, now &+ waitNanos)
            }
        }
        return wake
    }

    /// `nanoseconds` as an integer: 0 for none (or NaN), at most `Int64.max` (292 years), which any monotonic reading
    /// can have added to it.
    static func saturating(_ nanoseconds: Double) -> UInt64 {
        guard nanoseconds >= 1 else { return 0 }
        return nanoseconds < Double(Int64.max) ? UInt64(nanoseconds) : UInt64(Int64.max)
    }

    private mutating func refill(now: UInt64) {
        guard let rate = bytesPerSecond else { return }
        if let refilledAt, now > refilledAt {
            tokens = min(burst, tokens + Double(now - refilledAt) / 1e9 * rate)
        }
        refilledAt = max(refilledAt ?? now, now)
    }
}
