import MITMHTTP2

extension Leg {
    /// Writes `session`'s pending frames while the leg has room below `HTTP2Relay.highWater` (and below a throttled
    /// leg's own limit), or up to the high-water mark whatever is buffered when `ignoringHighWater`. Corked, so that
    /// small frames leave together in one record while a DATA frame is encrypted straight from nghttp2's buffer.
    /// Whether anything was written.
    func writeFrames(of session: HTTP2Session, ignoringHighWater: Bool) throws(HTTP2SessionError) -> Bool {
        let room = ignoringHighWater ? HTTP2Relay.highWater : outputRoom(below: HTTP2Relay.highWater)
        guard room > 0, !isClosed else { return false }
        cork()
        defer { uncork() }
        return try session.produceOutput(limit: room) { write($0) } > 0
    }
}
