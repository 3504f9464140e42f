import Testing

@testable import MITMHTTP2

/// A body leaves in DATA frames that each fill one TLS record (16 KiB of plaintext) exactly, handed out piece by
/// piece as nghttp2 makes them, so that a writer encrypting each piece at once sends whole records.
@Suite struct HTTP2RecordSizedFramesTests {
    private static let record = 16_384

    /// The sizes of the frames in `bytes` (nine-byte header plus payload), by type.
    private func frames(in bytes: [UInt8]) -> [(type: UInt8, size: Int)] {
        var frames: [(type: UInt8, size: Int)] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            frames.append((bytes[index + 3], 9 + length))
            index += 9 + length
        }
        #expect(index == bytes.count, "the output ends on a frame boundary")
        return frames
    }

    @Test func aBodyLeavesInFramesOfOneRecordEachAndArrivesWhole() throws {
        var settings = HTTP2Settings()
        settings.streamWindow = 1_000_000
        settings.connectionWindow = 1_000_000
        let pair = try SessionPair(client: settings)
        let id = try pair.client.submitRequest(Fields.get("/big"), endStream: true)
        try pair.pump()
        try pair.server.submitResponse(streamID: id, Fields.status(200), endStream: false)
        let body = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        pair.server.send(body, on: id)
        pair.server.finish(streamID: id)

        var pieces: [[UInt8]] = []
        let produced = try pair.server.produceOutput(limit: 1 << 20) { pieces.append(Array($0)) }
        let output = pieces.flatMap { $0 }
        #expect(produced == output.count)
        let data = frames(in: output).filter { $0.type == 0 }
        #expect(data.count == (body.count + Self.record - 10) / (Self.record - 9))
        #expect(data.dropLast().allSatisfy { $0.size == Self.record })
        #expect(data.allSatisfy { $0.size <= Self.record })
        #expect(pieces.allSatisfy { $0.count <= Self.record }, "each piece is at most one frame")

        try pair.client.receive(output)
        try pair.pump()
        #expect(pair.clientBody(id) == body)
        #expect(pair.clientEvents.contains(.endStream(streamID: id)))
    }

    @Test func theArrayIsThePiecesTogether() throws {
        let asArray = try SessionPair()
        let asPieces = try SessionPair()
        for pair in [asArray, asPieces] {
            let id = try pair.client.submitRequest(Fields.post(), endStream: false)
            pair.client.send([UInt8](repeating: 5, count: 40_000), on: id)
            pair.client.finish(streamID: id)
        }
        let array = try asArray.client.produceOutput()
        var joined: [UInt8] = []
        try asPieces.client.produceOutput(limit: 256 * 1024) { joined.append(contentsOf: $0) }
        #expect(array == joined)
        #expect(array.count > 40_000)
    }
}
