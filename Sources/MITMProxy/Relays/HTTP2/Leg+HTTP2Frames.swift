import MITMHTTP2

extension Leg {
    /// Writes `session`'s pending frames, at most `room` bytes, as nghttp2 makes them: corked, so that small frames
    /// leave together in one record while a DATA frame is encrypted straight from nghttp2's buffer. Whether anything
    /// was written.
    func writeFrames(of session: HTTP2Session, room: Int) throws(HTTP2SessionError) -> Bool {
        guard room > 0, !isClosed else { return false }
        cork()
        defer { uncork() }
        return try session.produceOutput(limit: room) { write($0) } > 0
    }
}
