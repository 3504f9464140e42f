import Testing

@testable import MITMHTTP2

@Suite struct HTTP2BadInputTests {
    /// A server session that has read a valid preface and SETTINGS.
    private func server(_ settings: HTTP2Settings = HTTP2Settings()) throws -> HTTP2Session {
        let session = try HTTP2Session(role: .server, settings: settings)
        try session.receive(RawFrame.clientPreface + RawFrame.settings() + RawFrame.settingsAck())
        _ = try session.produceOutput()
        _ = session.takeEvents()
        return session
    }

    @Test func somethingOtherThanThePrefaceIsFatal() throws {
        let session = try HTTP2Session(role: .server)
        let error = #expect(throws: HTTP2SessionError.self) {
            try session.receive(Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        }
        #expect(error?.isBadPreface == true)
    }

    @Test func dataOnStreamZeroGetsGoAwayProtocolError() throws {
        let session = try server()
        try session.receive(RawFrame.data(streamID: 0, count: 10))
        let output = try session.produceOutput()
        #expect(RawFrame.goAwayCode(in: output) == HTTP2ErrorCode.protocolError.rawValue)
        let events = session.takeEvents()
        #expect(
            events.contains { if case .goAwaySent(_, .protocolError, _) = $0 { return true } else { return false } })
        #expect(
            events.contains {
                if case .goAwaySent(_, _, let debug) = $0 { return !debug.isEmpty } else { return false }
            })
        #expect(!session.wantsRead)
    }

    @Test func overrunningAStreamWindowResetsTheStreamWithFlowControlError() throws {
        var settings = HTTP2Settings()
        settings.streamWindow = 16_384
        let session = try server(settings)
        try session.receive(
            RawFrame.headers(streamID: 1, endStream: false) + RawFrame.headers(streamID: 3, endStream: false))
        for _ in 0..<5 { try session.receive(RawFrame.data(streamID: 1, count: 16_000)) }
        try session.receive(RawFrame.data(streamID: 3, count: 1_000, endStream: true))
        let output = try session.produceOutput()
        let events = session.takeEvents()
        // nghttp2 notices the overrun at the frame that starts beyond the window.
        #expect(SessionPair.body(events, 1).count <= 16_384 + 16_000)
        #expect(RawFrame.parse(output).contains { $0.type == 0x3 && $0.streamID == 1 && $0.payload == [0, 0, 0, 3] })
        #expect(events.contains(.streamClosed(streamID: 1, .flowControlError)))
        #expect(SessionPair.body(events, 3).count == 1_000)
        #expect(RawFrame.goAwayCode(in: output) == nil)
    }

    @Test func overrunningTheConnectionWindowGetsGoAwayFlowControlError() throws {
        var settings = HTTP2Settings()
        settings.connectionWindow = 65_535
        let session = try server(settings)
        var burst = RawFrame.headers(streamID: 1, endStream: false) + RawFrame.headers(streamID: 3, endStream: false)
        for _ in 0..<3 {
            burst += RawFrame.data(streamID: 1, count: 16_000) + RawFrame.data(streamID: 3, count: 16_000)
        }
        try session.receive(burst)
        let output = try session.produceOutput()
        #expect(RawFrame.goAwayCode(in: output) == HTTP2ErrorCode.flowControlError.rawValue)
        #expect(!session.wantsRead)
    }

    @Test func aPingIsAnsweredWithTheSameOpaqueData() throws {
        let session = try server()
        let opaque: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        try session.receive(RawFrame.ping(opaque))
        let frames = RawFrame.parse(try session.produceOutput())
        #expect(frames.contains { $0.type == 0x6 && $0.flags == 0x1 && $0.payload == opaque })
    }

    @Test func serverPushIsRefusedByTheClientSession() throws {
        let client = try HTTP2Session(role: .client)
        let id = try client.submitRequest(Fields.get(), endStream: true)
        _ = try client.produceOutput()
        try client.receive(
            RawFrame.settings() + RawFrame.settingsAck() + RawFrame.pushPromise(streamID: UInt32(id), promised: 2))
        let output = try client.produceOutput()
        #expect(RawFrame.goAwayCode(in: output) == HTTP2ErrorCode.protocolError.rawValue)
        #expect(!client.takeEvents().contains { if case .headers = $0 { return true } else { return false } })
    }

    @Test func aHeaderBlockOverTheLimitIsFlaggedAndKeepsOnlyWhatFits() throws {
        var serverSettings = HTTP2Settings()
        serverSettings.maxHeaderListSize = 1_024
        let pair = try SessionPair(server: serverSettings)
        try pair.pump()
        let big = HTTP2HeaderField("x-big", String(repeating: "b", count: 4_000))
        let id = try pair.client.submitRequest(Fields.get() + [big], endStream: true)
        let small = try pair.client.submitRequest(Fields.get("/small"), endStream: true)
        try pair.pump()
        let block = SessionPair.blocks(pair.serverEvents, id).first
        #expect(block?.exceedsLimit == true)
        #expect(block?.fields.value(of: ":path") == "/")
        #expect(block?.fields.value(of: "x-big") == nil)
        #expect(block?.kind == .request)
        #expect(SessionPair.blocks(pair.serverEvents, small).first?.exceedsLimit == false)
    }

    @Test func anInvalidPseudoHeaderResetsOnlyThatStream() throws {
        let session = try server()
        // `:path` missing: static-table :method GET, :scheme https, then :authority literal.
        try session.receive(RawFrame.headers(streamID: 1, block: [0x82, 0x87, 0x41, 0x01, 0x61]))
        try session.receive(RawFrame.headers(streamID: 3))
        let output = try session.produceOutput()
        let events = session.takeEvents()
        #expect(RawFrame.parse(output).contains { $0.type == 0x3 && $0.streamID == 1 && $0.payload == [0, 0, 0, 1] })
        #expect(events.contains(.resetSent(streamID: 1, .protocolError)))
        #expect(SessionPair.blocks(events, 1).isEmpty)
        #expect(SessionPair.blocks(events, 3).first?.kind == .request)
        #expect(RawFrame.goAwayCode(in: output) == nil)
    }

    @Test func aHeaderBlockContinuedPastTheLimitIsAFlood() throws {
        var settings = HTTP2Settings()
        settings.maxContinuations = 3
        let session = try server(settings)
        // HEADERS without END_HEADERS, then CONTINUATION frames that never set it.
        var flood = RawFrame.frame(type: 0x1, flags: 0x1, streamID: 1, payload: RawFrame.getBlock)
        for _ in 0..<3 { flood += RawFrame.frame(type: 0x9, streamID: 1, payload: [0x82]) }
        try session.receive(flood)
        let error = #expect(throws: HTTP2SessionError.self) {
            try session.receive(RawFrame.frame(type: 0x9, streamID: 1, payload: [0x82]))
        }
        #expect(error?.isFlood == true)
    }

    @Test func acknowledgementsOwedPastTheLimitAreAFlood() throws {
        var settings = HTTP2Settings()
        settings.maxQueuedAcknowledgements = 10
        let session = try server(settings)
        // Ten PINGs owe ten acknowledgements, which nobody collects with produceOutput; the eleventh is one too many.
        for _ in 0..<10 { try session.receive(RawFrame.ping([0, 0, 0, 0, 0, 0, 0, 0])) }
        let error = #expect(throws: HTTP2SessionError.self) {
            try session.receive(RawFrame.ping([0, 0, 0, 0, 0, 0, 0, 0]))
        }
        #expect(error?.isFlood == true)
    }

    @Test func aSettingsFrameWithTooManyEntriesGetsGoAwayEnhanceYourCalm() throws {
        let session = try server()
        let entry: [UInt8] = [0x00, 0x03, 0x00, 0x00, 0x00, 0x64]  // MAX_CONCURRENT_STREAMS = 100
        let entries = (0...HTTP2Settings().maxSettingsEntries).flatMap { _ in entry }
        try session.receive(RawFrame.frame(type: 0x4, streamID: 0, payload: entries))
        #expect(RawFrame.goAwayCode(in: try session.produceOutput()) == HTTP2ErrorCode.enhanceYourCalm.rawValue)
        #expect(!session.wantsRead)
    }

    @Test func onlyAStreamsProgressCountsAsActivity() {
        #expect(HTTP2Event.data(streamID: 1, [1]).movesAStream)
        #expect(HTTP2Event.dataSent(streamID: 1, count: 1).movesAStream)
        #expect(HTTP2Event.streamClosed(streamID: 1, .cancel).movesAStream)
        #expect(!HTTP2Event.settingsReceived.movesAStream)
        #expect(!HTTP2Event.goAwayReceived(lastStreamID: 0, .noError, debug: "").movesAStream)
    }
}
