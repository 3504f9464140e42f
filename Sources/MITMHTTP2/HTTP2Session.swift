import CNGHTTP2

/// One HTTP/2 connection endpoint over nghttp2, sans I/O: bytes in with `receive`, bytes out with
/// `produceOutput`, what happened from `takeEvents`. Callbacks never re-enter: they record into a sink
/// that this class acts on after each nghttp2 call returns.
///
/// Flow control is manual: the connection-level window reopens as soon as DATA arrives, but a stream's
/// window reopens only when the owner calls `consume` (when the bytes have moved on), so a stream never
/// holds more unconsumed body than `HTTP2Settings.streamWindow`.
/// Not thread-safe: use it from one queue (the connection's event loop).
public final class HTTP2Session {
    /// Which end this session is.
    public let role: HTTP2Role
    /// What it advertised.
    public let settings: HTTP2Settings
    /// Body bytes received whose connection-level window has not been reopened yet.
    private var connectionWindowOwed = 0
    /// The connection-level receive window, and the unconsumed body the owner may hold before the window
    /// reopens only as it consumes (`settings.connectionWindow` unless changed with `setConnectionWindow`).
    public private(set) var connectionWindow: Int32
    private let session: OpaquePointer
    private let sink: HTTP2CallbackSink

    /// Creates a session and queues its SETTINGS (and, for a client, the connection preface).
    public init(role: HTTP2Role, settings: HTTP2Settings = HTTP2Settings()) throws(HTTP2SessionError) {
        self.role = role
        self.settings = settings
        connectionWindow = settings.connectionWindow
        let sink = HTTP2CallbackSink(role: role, maxHeaderListSize: Int(settings.maxHeaderListSize))
        self.sink = sink
        var callbacks: OpaquePointer?
        var option: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw HTTP2SessionError(code: NGHTTP2_ERR_NOMEM.rawValue, operation: "creating nghttp2 callbacks")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        HTTP2Callbacks.install(on: callbacks)
        guard nghttp2_option_new(&option) == 0, let option else {
            throw HTTP2SessionError(code: NGHTTP2_ERR_NOMEM.rawValue, operation: "creating nghttp2 options")
        }
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_no_closed_streams(option, 1)
        nghttp2_option_set_peer_max_concurrent_streams(option, settings.streamsBeforePeerSettings)
        nghttp2_option_set_max_continuations(option, settings.maxContinuations)
        nghttp2_option_set_max_settings(option, settings.maxSettingsEntries)
        nghttp2_option_set_max_outbound_ack(option, settings.maxQueuedAcknowledgements)
        nghttp2_option_set_stream_reset_rate_limit(option, settings.resetBurst, settings.resetsPerSecond)
        var pointer: OpaquePointer?
        let userData = Unmanaged.passUnretained(sink).toOpaque()
        let created =
            role == .server
            ? nghttp2_session_server_new2(&pointer, callbacks, userData, option)
            : nghttp2_session_client_new2(&pointer, callbacks, userData, option)
        guard created == 0, let pointer else {
            throw HTTP2SessionError(code: created, operation: "creating an HTTP/2 session")
        }
        session = pointer
        try submitInitialSettings()
    }

    deinit { nghttp2_session_del(session) }

    private func submitInitialSettings() throws(HTTP2SessionError) {
        var entries = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: settings.maxConcurrentStreams),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: UInt32(settings.streamWindow)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: settings.maxHeaderListSize),
        ]
        if role == .client {
            entries.append(
                nghttp2_settings_entry(
                    settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue),
                    value: settings.enablePush ? 1 : 0))
        }
        try check(
            nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count),
            "submitting SETTINGS")
        if settings.connectionWindow > 65_535 {  // the protocol's initial connection window
            try check(
                nghttp2_session_set_local_window_size(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0,
                    settings.connectionWindow),
                "raising the connection window")
        }
    }

    // MARK: input and output

    /// Processes bytes from the peer. Throws only when the connection cannot go on (a bad client
    /// preface, a flood, nghttp2 out of memory); protocol errors it can answer become a GOAWAY in the
    /// output and `goAwaySent` in the events.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2SessionError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        settle()
        if result < 0 { throw HTTP2SessionError(code: Int32(result), operation: "reading HTTP/2 frames") }
    }

    /// Processes bytes from the peer.
    public func receive(_ bytes: [UInt8]) throws(HTTP2SessionError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(HTTP2SessionError) in try receive(buffer) }
        }
        try result.get()
    }

    /// Serializes frames to send, up to about `limit` bytes (stops after the frame that crosses it).
    /// Body bytes leave their stream's queue here, reported as `dataSent`.
    public func produceOutput(limit: Int = 256 * 1024) throws(HTTP2SessionError) -> [UInt8] {
        var output: [UInt8] = []
        try produceOutput(limit: limit) { output.append(contentsOf: $0) }
        return output
    }

    /// Serializes frames to send, up to about `limit` bytes, handing each piece to `write` as nghttp2 makes it (the
    /// bytes are valid during the call only); how many bytes it handed over. A writer that encrypts at once saves
    /// collecting the frames into one array first: for a body, a copy of every byte.
    @discardableResult
    public func produceOutput(limit: Int, into write: (UnsafeRawBufferPointer) -> Void) throws(HTTP2SessionError)
        -> Int
    {
        var produced = 0
        while produced < limit {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 {
                settle()
                throw HTTP2SessionError(code: Int32(count), operation: "writing HTTP/2 frames")
            }
            if count > 0, let chunk {
                write(UnsafeRawBufferPointer(start: chunk, count: count))
                produced += count
            }
            let submittedTrailers = try submitDueTrailers()
            if count == 0 && !submittedTrailers { break }
        }
        settle()
        return produced
    }

    /// Moves everything the session buffered into `takeEvents()`, drops state of closed streams and
    /// reopens the connection window for DATA just received, as far as the connection's budget allows.
    private func settle() {
        if sink.receivedDataBytes > 0 {
            connectionWindowOwed += sink.receivedDataBytes
            sink.receivedDataBytes = 0
        }
        for streamID in sink.closedStreams {
            sink.heldBodyTotal -= sink.heldBodyBytes.removeValue(forKey: streamID) ?? 0
            sink.outbound[streamID] = nil
            sink.finalResponseReceived[streamID] = nil
        }
        sink.closedStreams.removeAll(keepingCapacity: true)
        reopenConnectionWindow()
    }

    private func submitDueTrailers() throws(HTTP2SessionError) -> Bool {
        guard !sink.trailersDue.isEmpty else { return false }
        let due = sink.trailersDue
        sink.trailersDue.removeAll()
        for streamID in due {
            guard let body = sink.outbound[streamID], let trailers = body.trailers else { continue }
            body.trailers = nil
            let result = trailers.withNameValuePairs { nghttp2_submit_trailer(session, streamID, $0, $1) }
            try check(result, "submitting trailers on stream \(streamID)")
        }
        return true
    }

    /// What happened since the last call, in order.
    public func takeEvents() -> [HTTP2Event] {
        sink.takeEvents()
    }

    /// Whether the session still expects frames from the peer.
    public var wantsRead: Bool { nghttp2_session_want_read(session) != 0 }
    /// Whether the session has frames to send.
    public var wantsWrite: Bool { nghttp2_session_want_write(session) != 0 }
    /// Whether the connection is over: nothing to read and nothing to write (after GOAWAY).
    public var isFinished: Bool { !wantsRead && !wantsWrite }

    // MARK: streams

    /// Client role: opens a stream with `fields` (pseudo-headers first); the body follows with `send`
    /// and `finish` unless `endStream`. nghttp2 holds the HEADERS back while the peer's concurrency
    /// limit is reached. Returns the stream ID.
    public func submitRequest(_ fields: [HTTP2HeaderField], endStream: Bool) throws(HTTP2SessionError) -> Int32 {
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: nil), read_callback: HTTP2Callbacks.readBody)
        let streamID = fields.withNameValuePairs { pairs, count in
            endStream
                ? nghttp2_submit_request(session, nil, pairs, count, nil, nil)
                : nghttp2_submit_request(session, nil, pairs, count, &provider, nil)
        }
        try check(streamID, "submitting a request")
        if !endStream { sink.outbound[streamID] = HTTP2OutboundBody() }
        return streamID
    }

    /// Server role: sends the final response head on `streamID`; the body follows unless `endStream`.
    public func submitResponse(streamID: Int32, _ fields: [HTTP2HeaderField], endStream: Bool) throws(HTTP2SessionError)
    {
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: nil), read_callback: HTTP2Callbacks.readBody)
        let result = fields.withNameValuePairs { pairs, count in
            endStream
                ? nghttp2_submit_response(session, streamID, pairs, count, nil)
                : nghttp2_submit_response(session, streamID, pairs, count, &provider)
        }
        try check(result, "submitting a response on stream \(streamID)")
        if !endStream { sink.outbound[streamID] = HTTP2OutboundBody() }
    }

    /// Server role: sends an interim `1xx` response head on `streamID`.
    public func submitInformational(streamID: Int32, _ fields: [HTTP2HeaderField]) throws(HTTP2SessionError) {
        let result = fields.withNameValuePairs { pairs, count in
            nghttp2_submit_headers(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, nil, pairs, count, nil)
        }
        try check(result, "submitting an interim response on stream \(streamID)")
    }

    /// Queues body bytes on a stream opened with a body; they leave as the peer's windows allow.
    public func send(_ bytes: [UInt8], on streamID: Int32) {
        guard let body = sink.outbound[streamID], !body.ended, !bytes.isEmpty else { return }
        body.append(bytes)
        _ = nghttp2_session_resume_data(session, streamID)
    }

    /// Ends the body queued on `streamID`, with trailer fields when `trailers` is not empty.
    public func finish(streamID: Int32, trailers: [HTTP2HeaderField] = []) {
        guard let body = sink.outbound[streamID], !body.ended else { return }
        body.ended = true
        body.trailers = trailers.isEmpty ? nil : trailers
        _ = nghttp2_session_resume_data(session, streamID)
    }

    /// Body bytes queued on `streamID` and not yet sent.
    public func queuedBytes(on streamID: Int32) -> Int { sink.outbound[streamID]?.buffered ?? 0 }

    /// Resets `streamID` with `code` (RST_STREAM).
    public func reset(streamID: Int32, code: HTTP2ErrorCode) {
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, code.rawValue)
    }

    /// Tells the session that `count` bytes received on `streamID` moved on: its window reopens by that much,
    /// and the connection's window too where it was held back.
    public func consume(streamID: Int32, count: Int) {
        guard count > 0 else { return }
        _ = nghttp2_session_consume_stream(session, streamID, count)
        if let held = sink.heldBodyBytes[streamID] {
            sink.heldBodyBytes[streamID] = held > count ? held - count : nil
            sink.heldBodyTotal -= min(held, count)
        }
        reopenConnectionWindow()
    }

    /// The connection window reopens on arrival, so that one stalled stream cannot block its siblings, until the
    /// owner holds `settings.connectionWindow` bytes of unconsumed body across all streams; past that it
    /// reopens only as bytes are consumed (or their stream closes). The owner so holds at most twice the
    /// connection window per connection, however many streams are open.
    private func reopenConnectionWindow() {
        guard connectionWindowOwed > 0 else { return }
        let room = Int(connectionWindow) - sink.heldBodyTotal
        let reopen = min(connectionWindowOwed, max(0, room))
        guard reopen > 0 else { return }
        _ = nghttp2_session_consume_connection(session, reopen)
        connectionWindowOwed -= reopen
    }

    /// Grows (or shrinks back) the connection-level receive window and the owner's budget of held body with it:
    /// a connection whose streams serve several client connections gets room for each, so that one slow client
    /// does not stall the others' streams.
    public func setConnectionWindow(_ bytes: Int32) {
        guard bytes != connectionWindow, bytes >= 65_535 else { return }
        _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, bytes)
        connectionWindow = bytes
        reopenConnectionWindow()
    }

    /// Whether `streamID` is open in the session.
    public func isOpen(streamID: Int32) -> Bool { nghttp2_session_find_stream(session, streamID) != nil }

    // MARK: connection

    /// Sends GOAWAY with `code`, naming the last stream the peer opened that this side processed.
    /// With `noError` the open streams finish; otherwise the session stops reading at once.
    public func goAway(code: HTTP2ErrorCode = .noError, debug: String = "") {
        if code != .noError {
            _ = nghttp2_session_terminate_session(session, code.rawValue)
            return
        }
        let lastStreamID = nghttp2_session_get_last_proc_stream_id(session)
        var debugBytes = Array(debug.utf8)
        _ = nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, code.rawValue,
            &debugBytes, debugBytes.count)
    }

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS (nghttp2 assumes 100 until its SETTINGS arrive).
    public var peerMaxConcurrentStreams: UInt32 {
        nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    /// Whether the peer accepts extended CONNECT (RFC 8441: it sent SETTINGS_ENABLE_CONNECT_PROTOCOL = 1), so
    /// that a stream may carry a WebSocket.
    public var peerAcceptsExtendedConnect: Bool {
        nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL) == 1
    }

    /// Server role: tells the peer that it may open streams with extended CONNECT (RFC 8441), in a SETTINGS frame
    /// of its own (the setting may go from absent to 1 at any time, never back). Once only.
    public func acceptExtendedConnect() throws(HTTP2SessionError) {
        guard role == .server, !acceptsExtendedConnect else { return }
        var entry = nghttp2_settings_entry(
            settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL.rawValue), value: 1)
        try check(
            nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1),
            "submitting SETTINGS_ENABLE_CONNECT_PROTOCOL")
        acceptsExtendedConnect = true
    }

    /// Whether `acceptExtendedConnect` was called.
    public private(set) var acceptsExtendedConnect = false

    /// The highest stream ID the peer opened that this side processed.
    public var lastProcessedStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(session) }

    private func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(HTTP2SessionError) {
        if result < 0 { throw HTTP2SessionError(code: result, operation: operation()) }
    }
}
