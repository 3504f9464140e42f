import Testing

@testable import MITMCore

@Suite struct WebSocketFrameReaderTests {
    private typealias F = WebSocketFrames

    private func read(
        _ bytes: [UInt8], _ direction: WebSocketDirection = .send, handshake: WebSocketHandshake = WebSocketHandshake(),
        limit: Int = 1 << 20, finish: Bool = false
    ) -> [WebSocketMessage] {
        var reader = WebSocketFrameReader(direction: direction, handshake: handshake, captureLimit: limit)
        return reader.feed(bytes) + (finish ? reader.finish() : [])
    }

    @Test func aMaskedTextFromTheClientIsUnmasked() {
        let messages = read(F.text("hello, server", masked: true))
        #expect(messages.count == 1)
        #expect(messages.first?.kind == .text)
        #expect(messages.first?.payloadText == "hello, server")
        #expect(messages.first?.direction == .send)
        #expect(messages.first?.problem == nil)
        #expect(messages.first?.wireSize == 13)
    }

    @Test(arguments: [125, 126, 65_535, 65_536, 300_000])
    func everyLengthEncodingReads(size: Int) {
        let payload = (0..<size).map { UInt8($0 % 251) }
        let messages = read(F.frame(2, payload, masked: false) + F.frame(2, [1, 2, 3], masked: false), .receive)
        #expect(messages.map(\.kind) == [.binary, .binary])
        #expect(messages.first?.payload.bytes == payload)
        #expect(messages.last?.payload.bytes == [1, 2, 3])
    }

    @Test func aLengthInTheEightByteFormThatWouldFitInTwoStillReads() {
        let messages = read(F.frame(2, [9, 9], masked: false, length127: true), .receive)
        #expect(messages.first?.payload.bytes == [9, 9])
        #expect(messages.first?.problem == nil)
    }

    @Test func fragmentsAreJoinedAroundAnInterleavedPing() {
        let bytes =
            F.frame(1, Array("frag".utf8), fin: false, masked: true)
            + F.frame(9, Array("are you there".utf8), masked: true)
            + F.frame(0, Array("mented ".utf8), fin: false, masked: true)
            + F.frame(0, Array("text".utf8), masked: true)
        let messages = read(bytes)
        #expect(messages.map(\.kind) == [.ping, .text])
        #expect(messages[0].payloadText == "are you there")
        #expect(messages[1].payloadText == "fragmented text")
        #expect(messages[1].frames == 3)
    }

    @Test func anyWayTheBytesAreSplitGivesTheSameMessages() {
        let deflater = WebSocketDeflater()
        let handshake = WebSocketHandshake(deflate: WebSocketDeflate())
        let bytes =
            F.frame(1, Array("first ".utf8), fin: false, masked: true)
            + F.frame(10, [], masked: true)
            + F.frame(0, Array("message".utf8), masked: true)
            + F.frame(2, (0..<70_000).map { UInt8($0 % 7) }, masked: true)
            + F.frame(
                1, deflater.compress(Array(String(repeating: "compressed ", count: 50).utf8)), masked: true, rsv1: true)
            + F.close(1000, "done", masked: true)
        let whole = read(bytes, handshake: handshake)
        #expect(whole.map(\.kind) == [.pong, .text, .binary, .text, .close])
        var generator = SplitMix64(seed: 42)
        for _ in 0..<50 {
            var reader = WebSocketFrameReader(direction: .send, handshake: handshake, captureLimit: 1 << 20)
            var messages: [WebSocketMessage] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 1 + Int(generator.next() % 40))
                messages += reader.feed(Array(bytes[start..<end]))
                start = end
            }
            #expect(messages == whole)
        }
    }

    @Test func compressedMessagesInflateAndLaterOnesMayReferToEarlierOnes() {
        let deflater = WebSocketDeflater()
        let text = Array(String(repeating: "the same words again and again ", count: 20).utf8)
        let first = deflater.compress(text)
        let second = deflater.compress(text)
        #expect(second.count < first.count / 2, "the second message refers back to the first")
        let messages = read(
            F.frame(1, first, masked: false, rsv1: true) + F.frame(1, second, masked: false, rsv1: true),
            .receive, handshake: WebSocketHandshake(deflate: WebSocketDeflate()))
        #expect(messages.map(\.payload.bytes) == [text, text])
        #expect(messages.allSatisfy { $0.compressed && $0.problem == nil })
        #expect(messages.map(\.wireSize) == [first.count, second.count])
    }

    @Test func withoutContextTakeoverEachMessageStartsAfresh() {
        let deflater = WebSocketDeflater()
        let text = Array("hello hello hello hello".utf8)
        let frames =
            F.frame(1, deflater.compress(text, forgetWindow: true), masked: true, rsv1: true)
            + F.frame(1, deflater.compress(text, forgetWindow: true), masked: true, rsv1: true)
        let handshake = WebSocketHandshake(deflate: WebSocketDeflate(clientNoContextTakeover: true))
        #expect(read(frames, handshake: handshake).map(\.payload.bytes) == [text, text])
    }

    @Test func aFragmentedCompressedMessageInflatesWhole() {
        let deflater = WebSocketDeflater()
        let text = Array(String(repeating: "fragment ", count: 100).utf8)
        let compressed = deflater.compress(text)
        let half = compressed.count / 2
        let frames =
            F.frame(1, Array(compressed[..<half]), fin: false, masked: false, rsv1: true)
            + F.frame(0, Array(compressed[half...]), masked: false)
        let messages = read(frames, .receive, handshake: WebSocketHandshake(deflate: WebSocketDeflate()))
        #expect(messages.first?.payload.bytes == text)
        #expect(messages.first?.frames == 2)
    }

    @Test func aMessageOverTheLimitIsKeptTruncatedWithItsFullSize() {
        let text = String(repeating: "é", count: 100)  // 200 bytes
        let messages = read(F.text(text, masked: true), limit: 11)
        #expect(messages.first?.payload.bytes.count == 11)
        #expect(messages.first?.payload.totalSize == 200)
        #expect(messages.first?.payload.isTruncated == true)
        #expect(
            messages.first?.payloadText == String(repeating: "é", count: 5), "the cut inside a character is dropped")
        #expect(messages.first?.problem == nil)
    }

    @Test func aCloseFrameGivesItsCodeAndReason() {
        let messages = read(F.close(1001, "going away", masked: false), .receive)
        #expect(messages.first?.kind == .close)
        #expect(messages.first?.closeCode == 1001)
        #expect(messages.first?.closeReason == "going away")
        #expect(messages.first?.problem == nil)
        #expect(read(F.frame(8, [], masked: false), .receive).first?.closeCode == nil)
    }

    // MARK: malformed frames

    @Test func anUnmaskedClientFrameIsNamedAndReadingGoesOn() {
        let messages = read(F.text("plain", masked: false) + F.text("next", masked: true))
        #expect(messages.map(\.payloadText) == ["plain", "next"])
        #expect(messages[0].problem == "an unmasked frame from the client (clients must mask every frame)")
        #expect(messages[1].problem == nil)
        #expect(
            read(F.text("masked", masked: true), .receive).first?.problem
                == "a masked frame from the server (servers must not mask)")
    }

    @Test func anOversizeOrFragmentedControlFrameIsNamed() {
        let messages = read(
            F.frame(9, [UInt8](repeating: 1, count: 126), masked: false) + F.frame(10, [], fin: false, masked: false),
            .receive)
        #expect(messages.map(\.kind) == [.ping, .pong])
        #expect(messages[0].problem == "a control frame of 126 bytes (at most 125 allowed)")
        #expect(messages[0].payload.totalSize == 126)
        #expect(messages[1].problem == "a fragmented control frame")
    }

    @Test func textThatIsNotUTF8IsNamedEvenAcrossFragmentsAndBeyondTheLimit() {
        let bytes =
            F.frame(1, Array("valid start ".utf8) + [0xE2], fin: false, masked: true)
            + F.frame(0, [0x28, 0xA1], masked: true)
        let messages = read(bytes, limit: 4)
        #expect(messages.first?.problem == "a text message that is not valid UTF-8")
        #expect(read(F.frame(1, [0xC3], masked: true)).first?.problem == "a text message that is not valid UTF-8")
    }

    @Test(arguments: [
        (WebSocketFrames.frame(3, [1], masked: true), "a frame with the reserved opcode 3"),
        (WebSocketFrames.frame(1, [1], masked: true, rsv: 0x20), "a frame with the reserved bits RSV2 or RSV3 set"),
        (
            WebSocketFrames.frame(1, [1], masked: true, rsv1: true),
            "a frame with RSV1 set although permessage-deflate was not agreed"
        ),
        (WebSocketFrames.frame(0, [1], masked: true), "a continuation frame with no message to continue"),
        ([0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1], "a frame length with its most significant bit set"),
    ])
    func anUnreadableFrameStopsTheReadingOnce(frame: [UInt8], reason: String) {
        let messages = read(F.text("before", masked: true) + frame + F.text("after", masked: true))
        #expect(messages.count == 2)
        #expect(messages.first?.payloadText == "before")
        #expect(messages.last?.problem == "\(reason); later frames in this direction are relayed unread")
    }

    @Test func aNewMessageInsideAFragmentedOneStopsAndReportsTheCutMessage() {
        let messages = read(F.frame(1, Array("part".utf8), fin: false, masked: true) + F.text("other", masked: true))
        #expect(messages.count == 2)
        #expect(messages[0].payloadText == "part")
        #expect(messages[0].problem == "cut short by an unreadable frame")
        #expect(messages[1].problem?.hasPrefix("a new data frame before the fragmented message's last frame") == true)
    }

    @Test func bytesThatAreNotWebSocketGiveOneReportNotAFlood() {
        let messages = read(Array("raw bytes after 101, not frames at all".utf8), .receive)
        #expect(messages.count == 1)
        #expect(messages[0].problem?.hasSuffix("later frames in this direction are relayed unread") == true)
    }

    @Test(arguments: [
        ([0x88, 0x01, 0x03], "a close frame with a 1-byte payload (a status code takes 2)"),
        (WebSocketFrames.close(1005, "", masked: false), "the close code 1005, which may not be sent in a frame"),
        (WebSocketFrames.frame(8, [0x03, 0xE8, 0xC3], masked: false), "a close reason that is not UTF-8"),
    ])
    func aBadCloseFrameIsNamed(frame: [UInt8], problem: String) {
        let messages = read(frame, .receive)
        #expect(messages.first?.kind == .close)
        #expect(messages.first?.problem == problem)
    }

    @Test func compressedDataThatDoesNotInflateStopsTheReading() {
        let garbage: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let messages = read(
            F.frame(2, garbage, masked: false, rsv1: true) + F.frame(2, [1], masked: false), .receive,
            handshake: WebSocketHandshake(deflate: WebSocketDeflate()))
        #expect(messages.count == 1)
        #expect(messages[0].problem?.hasPrefix("compressed data that does not inflate") == true)
    }

    @Test func aMessageInflatingBeyondTheLimitStopsTheReading() {
        let deflater = WebSocketDeflater()
        let bomb = deflater.compress(
            [UInt8](repeating: 0, count: WebSocketFrameReader.inflatedMessageLimit + 1024 * 1024))
        #expect(bomb.count < 200_000)
        let messages = read(
            F.frame(2, bomb, masked: false, rsv1: true), .receive,
            handshake: WebSocketHandshake(deflate: WebSocketDeflate()),
            limit: 100)
        #expect(messages.count == 1)
        #expect(messages[0].problem?.hasPrefix("a message inflating to more than 64 MiB") == true)
        #expect(messages[0].payload.bytes == [UInt8](repeating: 0, count: 100), "what was kept before it stopped")
    }

    @Test func theConnectionEndingInsideAFrameOrMessageIsReported() {
        let frame = F.text("cut", masked: true)
        let insideFrame = read(Array(frame.dropLast()), finish: true)
        #expect(insideFrame.count == 1)
        #expect(
            insideFrame[0].problem?.hasPrefix("the connection ended inside a frame (2 of its 3 payload bytes came)")
                == true)
        let insideMessage = read(F.frame(1, Array("a".utf8), fin: false, masked: true), finish: true)
        #expect(insideMessage.first?.problem == "the connection ended before the fragmented message's last frame")
        #expect(
            read(Array(frame.prefix(1)), finish: true).first?.problem == "the connection ended inside a frame header")
        #expect(read(frame, finish: true).map(\.problem) == [nil])
    }

    // MARK: handshake

    @Test func theHandshakeReadsPermessageDeflateFromTheServersAnswer() {
        let request = HTTPRequestHead(
            method: "GET", target: "/chat", headers: ["Upgrade": "websocket", "Connection": "Upgrade"])
        let response = HTTPResponseHead(
            status: 101, reason: "Switching Protocols",
            headers: [
                "Upgrade": "WebSocket",
                "Sec-WebSocket-Extensions": "permessage-deflate; server_no_context_takeover; client_max_window_bits=10",
            ])
        let handshake = WebSocketHandshake.http1(request: request, response: response)
        #expect(handshake == WebSocketHandshake(deflate: WebSocketDeflate(serverNoContextTakeover: true)))
        #expect(
            WebSocketHandshake.http1(
                request: request, response: HTTPResponseHead(status: 101, reason: "", headers: ["Upgrade": "h2c"]))
                == nil)
        #expect(WebSocketHandshake.http1(request: request, response: HTTPResponseHead(status: 200, reason: "")) == nil)
        let other = WebSocketHandshake.extendedConnect(
            status: 200, headers: ["sec-websocket-extensions": "x-webkit-deflate-frame"])
        #expect(other == WebSocketHandshake(otherExtensions: ["x-webkit-deflate-frame"]))
        #expect(WebSocketHandshake.extendedConnect(status: 404, headers: [:]) == nil)
    }
}
