import MITMCore

/// libFuzzer entry: the WebSocket frame reader on one direction's raw bytes. The first input byte picks the
/// direction, whether permessage-deflate was agreed (with or without context takeover), the capture limit and
/// how the rest is split; read whole and in pieces, the messages must be the same, and no message may keep more
/// payload than the limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let direction: WebSocketDirection = control & 1 == 0 ? .send : .receive
    let deflate: WebSocketDeflate? = control & 2 == 0 ? nil
        : WebSocketDeflate(serverNoContextTakeover: control & 4 != 0, clientNoContextTakeover: control & 4 != 0)
    let handshake = WebSocketHandshake(deflate: deflate, otherExtensions: control & 8 != 0 ? ["x-other"] : [])
    let limit = [0, 3, 125, 4096][Int(control >> 4) & 3]

    var whole = WebSocketFrameReader(direction: direction, handshake: handshake, captureLimit: limit)
    let wholeMessages = whole.feed(bytes) + whole.finish()

    var pieces = WebSocketFrameReader(direction: direction, handshake: handshake, captureLimit: limit)
    var pieceMessages: [WebSocketMessage] = []
    var state = UInt64(control) &* 0x9E37_79B9_7F4A_7C15 | 1
    var start = 0
    while start < bytes.count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        let end = min(bytes.count, start + 1 + Int(state % 23))
        pieceMessages += pieces.feed(Array(bytes[start..<end]))
        start = end
    }
    pieceMessages += pieces.finish()

    precondition(wholeMessages == pieceMessages, "reading whole and in pieces gave different messages")
    for message in wholeMessages {
        precondition(message.payload.bytes.count <= limit, "a message kept more than the capture limit")
        precondition(message.payload.bytes.count <= message.payload.totalSize, "kept more than was relayed")
    }
    return 0
}
