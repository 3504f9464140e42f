/// Everything nghttp2's callbacks may touch during a `mem_recv`/`mem_send` call. Callbacks only append
/// here (and data providers read queued body bytes); the session acts on it after the call returns, so
/// nothing re-enters nghttp2 from inside a callback.
final class HTTP2CallbackSink {
    /// A header block being received, field by field.
    struct PartialBlock {
        var fields: [HTTP2HeaderField] = []
        var size = 0
        var exceedsLimit = false

        /// Counts a field of `size` (its RFC 9113 list size) and keeps it while the block is within `limit`.
        /// `field` copies the bytes out of nghttp2, so it runs only for a field that is kept: past the limit
        /// an HPACK bomb (one-byte references to a 4 KiB table entry) costs a sum, not a copy.
        mutating func add(size: Int, limit: Int, _ field: () -> HTTP2HeaderField) {
            guard !exceedsLimit else { return }
            self.size += size
            if self.size > limit {
                exceedsLimit = true
            } else {
                fields.append(field())
            }
        }
    }

    let role: HTTP2Role
    let maxHeaderListSize: Int
    private(set) var events: [HTTP2Event] = []
    /// The header block being received and its stream: HTTP/2 sends a block's frames back to back (RFC 9113
    /// §4.3), so one block at a time is in progress and a field needs no look-up by stream.
    var partialBlock: (streamID: Int32, block: PartialBlock)?
    /// Client role: streams whose final (non-1xx) response head arrived, so a later block is trailers.
    var finalResponseReceived = HTTP2StreamTable<Void>()
    var outbound = HTTP2StreamTable<HTTP2OutboundBody>()
    /// Streams whose body ended with trailers still to submit (DATA went out without END_STREAM).
    var trailersDue: [Int32] = []
    /// DATA payload received in the current call, for connection-level flow control.
    var receivedDataBytes = 0
    /// DATA payload received per stream and not consumed by the owner yet.
    var heldBodyBytes = HTTP2StreamTable<Int>()
    /// The sum of `heldBodyBytes`, kept as it changes.
    var heldBodyTotal = 0
    var closedStreams: [Int32] = []

    init(role: HTTP2Role, maxHeaderListSize: Int) {
        self.role = role
        self.maxHeaderListSize = maxHeaderListSize
    }

    /// Keeps an event for `takeEvents`. The list starts with room for a few: a read or a write usually records
    /// several, and growing one at a time was several allocations per request.
    func record(_ event: HTTP2Event) {
        if events.capacity == 0 { events.reserveCapacity(8) }
        events.append(event)
    }

    /// The events recorded since the last call.
    func takeEvents() -> [HTTP2Event] {
        defer { events = [] }
        return events
    }

    func beginBlock(streamID: Int32) {
        var block = PartialBlock()
        block.fields.reserveCapacity(16)
        partialBlock = (streamID, block)
    }

    /// A field of a block being received (in place: the block's field list is never copied).
    func addField(streamID: Int32, size: Int, _ field: () -> HTTP2HeaderField) {
        guard partialBlock?.streamID == streamID else { return }
        partialBlock?.block.add(size: size, limit: maxHeaderListSize, field)
    }

    /// A header block completed; `opensStream` is nghttp2's category (request, or first response block).
    func endBlock(streamID: Int32, opensStream: Bool, endStream: Bool) {
        guard let (blockStreamID, block) = partialBlock, blockStreamID == streamID else { return }
        partialBlock = nil
        record(
            .headers(
                streamID: streamID,
                HTTP2HeaderBlock(
                    kind: kind(of: block, streamID: streamID, opensStream: opensStream), fields: block.fields,
                    endStream: endStream, exceedsLimit: block.exceedsLimit)))
    }

    private func kind(of block: PartialBlock, streamID: Int32, opensStream: Bool) -> HTTP2HeaderBlockKind {
        switch role {
        case .server:
            return opensStream ? .request : .trailers
        case .client:
            if finalResponseReceived[streamID] != nil { return .trailers }
            if block.fields.statusIsInformational { return .informational }
            finalResponseReceived[streamID] = ()
            return .response
        }
    }

    /// Body bytes received on one stream join the previous event's while that takes no copy of more than this many
    /// (a frame split across TLS records arrives in pieces); larger pieces become an event of their own, which the
    /// relay queues as they are, instead of growing an array by a copy of everything before them.
    private static let smallData = 4_096

    func received(_ bytes: UnsafeBufferPointer<UInt8>, streamID: Int32) {
        receivedDataBytes += bytes.count
        heldBodyBytes[streamID, default: 0] += bytes.count
        heldBodyTotal += bytes.count
        if case .data(let lastID, var data)? = events.last, lastID == streamID,
            data.count + bytes.count <= data.capacity || data.count < Self.smallData
        {
            events.removeLast()
            data.append(contentsOf: bytes)
            record(.data(streamID: streamID, data))
        } else {
            record(.data(streamID: streamID, Array(bytes)))
        }
    }

    func sent(_ count: Int, streamID: Int32) {
        if case .dataSent(let lastID, let previous)? = events.last, lastID == streamID {
            events[events.count - 1] = .dataSent(streamID: streamID, count: previous + count)
        } else {
            record(.dataSent(streamID: streamID, count: count))
        }
    }

    func streamClosed(_ streamID: Int32, code: HTTP2ErrorCode) {
        if partialBlock?.streamID == streamID { partialBlock = nil }
        closedStreams.append(streamID)
        record(.streamClosed(streamID: streamID, code))
    }
}
