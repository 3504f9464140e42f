import CNGHTTP2

/// The C callbacks handed to nghttp2. Each one only records into the session's `HTTP2CallbackSink`.
enum HTTP2Callbacks {
    static func sink(_ userData: UnsafeMutableRawPointer?) -> HTTP2CallbackSink {
        Unmanaged<HTTP2CallbackSink>.fromOpaque(userData!).takeUnretainedValue()
    }

    static func install(on callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            HTTP2Callbacks.sink(userData).beginBlock(streamID: frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, flags, userData in
            guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            let size = HTTP2HeaderField.listSize(nameLength: nameLength, valueLength: valueLength)
            HTTP2Callbacks.sink(userData).addField(streamID: frame.pointee.hd.stream_id, size: size) {
                HTTP2HeaderField(
                    name: HTTP2CommonBytes.name(name, count: nameLength),
                    value: HTTP2CommonBytes.value(value, count: valueLength),
                    neverIndexed: flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
            guard let frame else { return 0 }
            HTTP2Callbacks.frameReceived(frame.pointee, sink: HTTP2Callbacks.sink(userData))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, userData in
            HTTP2Callbacks.sink(userData).received(UnsafeBufferPointer(start: data, count: length), streamID: streamID)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, userData in
            guard let frame else { return 0 }
            let header = frame.pointee.hd
            if header.type == UInt8(NGHTTP2_RST_STREAM.rawValue) {
                HTTP2Callbacks.sink(userData).record(
                    .resetSent(
                        streamID: header.stream_id, HTTP2ErrorCode(rawValue: frame.pointee.rst_stream.error_code)))
            } else if header.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
                let goaway = frame.pointee.goaway
                HTTP2Callbacks.sink(userData).record(
                    .goAwaySent(
                        lastStreamID: goaway.last_stream_id, HTTP2ErrorCode(rawValue: goaway.error_code),
                        debug: HTTP2Callbacks.text(goaway.opaque_data, goaway.opaque_data_len)))
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, userData in
            HTTP2Callbacks.sink(userData).streamClosed(streamID, code: HTTP2ErrorCode(rawValue: errorCode))
            return 0
        }
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks) { _, frame, libraryError, userData in
            guard let frame else { return 0 }
            let header = frame.pointee.hd
            HTTP2Callbacks.sink(userData).record(
                .diagnostic(
                    "invalid \(HTTP2FrameName.name(of: header.type)) frame on stream \(header.stream_id): \(String(cString: nghttp2_strerror(libraryError)))"
                ))
            return 0
        }
        nghttp2_session_callbacks_set_data_source_read_length_callback(callbacks) { _, _, _, _, _, _, _ in
            HTTP2Callbacks.dataPayloadLimit
        }
        nghttp2_session_callbacks_set_error_callback2(callbacks) { _, _, message, length, userData in
            guard let message else { return 0 }
            let text = String(decoding: UnsafeRawBufferPointer(start: message, count: length), as: UTF8.self)
            HTTP2Callbacks.sink(userData).record(.diagnostic(text))
            return 0
        }
    }

    fileprivate static func frameReceived(_ frame: nghttp2_frame, sink: HTTP2CallbackSink) {
        let header = frame.hd
        let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue:
            let category = frame.headers.cat
            sink.endBlock(
                streamID: header.stream_id,
                opensStream: category == NGHTTP2_HCAT_REQUEST || category == NGHTTP2_HCAT_RESPONSE,
                endStream: endStream)
        case NGHTTP2_DATA.rawValue:
            if endStream { sink.record(.endStream(streamID: header.stream_id)) }
        case NGHTTP2_RST_STREAM.rawValue:
            sink.record(
                .resetReceived(streamID: header.stream_id, HTTP2ErrorCode(rawValue: frame.rst_stream.error_code)))
        case NGHTTP2_SETTINGS.rawValue:
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { sink.record(.settingsReceived) }
        case NGHTTP2_GOAWAY.rawValue:
            let goaway = frame.goaway
            sink.record(
                .goAwayReceived(
                    lastStreamID: goaway.last_stream_id,
                    HTTP2ErrorCode(rawValue: goaway.error_code),
                    debug: text(goaway.opaque_data, goaway.opaque_data_len)))
        default:
            return
        }
    }

    /// The most DATA payload per frame: with its 9-byte frame header, a frame fills one TLS record (16 KiB of
    /// plaintext) exactly, so each frame written on goes out as one record and one send, not a record and a 9-byte
    /// one. nghttp2 lowers it further where a flow-control window or the peer's frame size is smaller.
    static let dataPayloadLimit = 16_384 - 9

    /// GOAWAY debug data as text (peers put a human reason there).
    static func text(_ bytes: UnsafeMutablePointer<UInt8>?, _ count: Int) -> String {
        guard let bytes, count > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// nghttp2's data provider: hands out the stream's queued body bytes, defers when none are queued,
    /// and ends the body (without END_STREAM when trailers follow).
    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, userData in
        let sink = HTTP2Callbacks.sink(userData)
        guard let body = sink.outbound[streamID], let buffer, let flags else {
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        let count = body.read(into: buffer, capacity: length)
        if count > 0 { sink.sent(count, streamID: streamID) }
        guard body.buffered == 0 else { return count }
        if body.ended {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            if body.trailers != nil {
                flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                sink.trailersDue.append(streamID)
            }
            return count
        }
        return count > 0 ? count : Int(NGHTTP2_ERR_DEFERRED.rawValue)
    }
}

/// Frame type names for log lines.
enum HTTP2FrameName {
    static func name(of type: UInt8) -> String {
        let names = [
            "DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
            "WINDOW_UPDATE", "CONTINUATION",
        ]
        return Int(type) < names.count ? names[Int(type)] : "type-\(type)"
    }
}
