/// Hand-built HTTP/2 frames for feeding a session what a well-behaved nghttp2 peer never sends.
enum RawFrame {
    static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func frame(type: UInt8, flags: UInt8 = 0, streamID: UInt32, payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [
            UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags,
            UInt8(streamID >> 24 & 0x7f), UInt8(streamID >> 16 & 0xff), UInt8(streamID >> 8 & 0xff),
            UInt8(streamID & 0xff),
        ] + payload
    }

    static func settings() -> [UInt8] { frame(type: 0x4, streamID: 0) }

    static func settingsAck() -> [UInt8] { frame(type: 0x4, flags: 0x1, streamID: 0) }

    static func data(streamID: UInt32, count: Int, endStream: Bool = false) -> [UInt8] {
        frame(
            type: 0x0, flags: endStream ? 0x1 : 0, streamID: streamID, payload: [UInt8](repeating: 0x61, count: count))
    }

    static func ping(_ opaque: [UInt8]) -> [UInt8] { frame(type: 0x6, streamID: 0, payload: opaque) }

    /// A HEADERS block for `GET https://a/` from HPACK's static table (`:authority: a` as a literal).
    static let getBlock: [UInt8] = [0x82, 0x87, 0x84, 0x41, 0x01, 0x61]

    static func headers(streamID: UInt32, block: [UInt8] = getBlock, endStream: Bool = true) -> [UInt8] {
        frame(type: 0x1, flags: 0x4 | (endStream ? 0x1 : 0), streamID: streamID, payload: block)
    }

    static func pushPromise(streamID: UInt32, promised: UInt32) -> [UInt8] {
        let id = [
            UInt8(promised >> 24 & 0x7f), UInt8(promised >> 16 & 0xff), UInt8(promised >> 8 & 0xff),
            UInt8(promised & 0xff),
        ]
        return frame(type: 0x5, flags: 0x4, streamID: streamID, payload: id + getBlock)
    }

    /// The frames in `bytes` as (type, flags, stream ID, payload); stops at an incomplete frame.
    static func parse(_ bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8])] {
        var frames: [(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8])] = []
        var index = bytes.starts(with: clientPreface) ? clientPreface.count : 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 9 + length <= bytes.count else { break }
            let streamID =
                UInt32(bytes[index + 5] & 0x7f) << 24 | UInt32(bytes[index + 6]) << 16
                | UInt32(bytes[index + 7]) << 8 | UInt32(bytes[index + 8])
            frames.append((bytes[index + 3], bytes[index + 4], streamID, Array(bytes[index + 9..<index + 9 + length])))
            index += 9 + length
        }
        return frames
    }

    /// The error code of the first GOAWAY in `bytes`, if any.
    static func goAwayCode(in bytes: [UInt8]) -> UInt32? {
        guard let goaway = parse(bytes).first(where: { $0.type == 0x7 }), goaway.payload.count >= 8 else { return nil }
        let p = goaway.payload
        return UInt32(p[4]) << 24 | UInt32(p[5]) << 16 | UInt32(p[6]) << 8 | UInt32(p[7])
    }
}
