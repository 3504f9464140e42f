import Testing

@testable import MITMHTTP2

@Suite struct HTTP2ExchangeTests {
    @Test func getRequestAndResponseWithBody() throws {
        let pair = try SessionPair()
        let id = try pair.client.submitRequest(
            Fields.get("/hello") + [HTTP2HeaderField("accept", "*/*")], endStream: true)
        try pair.pump()
        let requests = SessionPair.blocks(pair.serverEvents, id)
        #expect(requests.count == 1)
        #expect(requests.first?.kind == .request)
        #expect(requests.first?.endStream == true)
        #expect(requests.first?.fields.value(of: ":path") == "/hello")
        #expect(requests.first?.fields.value(of: "accept") == "*/*")

        try pair.server.submitResponse(
            streamID: id, Fields.status(200, [HTTP2HeaderField("content-type", "text/plain")]), endStream: false)
        pair.server.send(Array("hello, ".utf8), on: id)
        pair.server.send(Array("world".utf8), on: id)
        pair.server.finish(streamID: id)
        try pair.pump()
        let responses = SessionPair.blocks(pair.clientEvents, id)
        #expect(responses.map(\.kind) == [.response])
        #expect(responses.first?.fields.value(of: ":status") == "200")
        #expect(String(decoding: pair.clientBody(id), as: UTF8.self) == "hello, world")
        #expect(pair.clientEvents.contains(.endStream(streamID: id)))
        #expect(pair.clientEvents.contains(.streamClosed(streamID: id, .noError)))
        #expect(pair.serverEvents.contains(.dataSent(streamID: id, count: 12)))
    }

    /// Fields are handed to nghttp2 from temporary memory (on the stack when it has room): a usual head and one of
    /// 40 KB arrive byte for byte, in order, with their never-indexed flag.
    @Test func smallAndLargeHeadsArriveExactly() throws {
        let pair = try SessionPair()
        let large = String(repeating: "v", count: 40_000)
        let fields = [
            HTTP2HeaderField("x-large", large), HTTP2HeaderField("cookie", "a=1", neverIndexed: true),
            HTTP2HeaderField("x-empty", ""),
        ]
        let small = try pair.client.submitRequest(Fields.get("/small") + [fields[1]], endStream: true)
        let big = try pair.client.submitRequest(Fields.get("/big") + fields, endStream: true)
        try pair.pump()
        #expect(SessionPair.blocks(pair.serverEvents, small).first?.fields == Fields.get("/small") + [fields[1]])
        #expect(SessionPair.blocks(pair.serverEvents, big).first?.fields == Fields.get("/big") + fields)
    }

    @Test func requestBodyAndTrailersArriveInOrder() throws {
        let pair = try SessionPair()
        let id = try pair.client.submitRequest(Fields.post(), endStream: false)
        pair.client.send([UInt8](repeating: 1, count: 40_000), on: id)
        pair.client.send([UInt8](repeating: 2, count: 30_000), on: id)
        pair.client.finish(streamID: id, trailers: [HTTP2HeaderField("x-checksum", "abc")])
        try pair.pump()
        pair.server.consume(streamID: id, count: 70_000)
        try pair.pump()
        let body = pair.serverBody(id)
        #expect(body.count == 70_000)
        #expect(body.first == 1 && body.last == 2)
        let blocks = SessionPair.blocks(pair.serverEvents, id)
        #expect(blocks.map(\.kind) == [.request, .trailers])
        #expect(blocks.last?.endStream == true)
        #expect(blocks.last?.fields == [HTTP2HeaderField("x-checksum", "abc")])
    }

    @Test func responseTrailersWithAndWithoutBody() throws {
        let pair = try SessionPair()
        let withBody = try pair.client.submitRequest(Fields.get("/a"), endStream: true)
        let withoutBody = try pair.client.submitRequest(Fields.get("/b"), endStream: true)
        try pair.pump()
        try pair.server.submitResponse(streamID: withBody, Fields.status(200), endStream: false)
        pair.server.send(Array("body".utf8), on: withBody)
        pair.server.finish(streamID: withBody, trailers: [HTTP2HeaderField("grpc-status", "0")])
        try pair.server.submitResponse(streamID: withoutBody, Fields.status(200), endStream: false)
        pair.server.finish(streamID: withoutBody, trailers: [HTTP2HeaderField("grpc-status", "5")])
        try pair.pump()
        #expect(SessionPair.blocks(pair.clientEvents, withBody).map(\.kind) == [.response, .trailers])
        #expect(SessionPair.blocks(pair.clientEvents, withBody).last?.fields.value(of: "grpc-status") == "0")
        #expect(pair.clientBody(withBody) == Array("body".utf8))
        #expect(SessionPair.blocks(pair.clientEvents, withoutBody).map(\.kind) == [.response, .trailers])
        #expect(SessionPair.blocks(pair.clientEvents, withoutBody).last?.fields.value(of: "grpc-status") == "5")
        #expect(pair.clientBody(withoutBody).isEmpty)
    }

    @Test func interimResponsesComeBeforeTheFinalOne() throws {
        let pair = try SessionPair()
        let id = try pair.client.submitRequest(Fields.get(), endStream: true)
        try pair.pump()
        try pair.server.submitInformational(
            streamID: id, Fields.status(103, [HTTP2HeaderField("link", "</a.css>; rel=preload")]))
        try pair.server.submitResponse(streamID: id, Fields.status(204), endStream: true)
        try pair.pump()
        let blocks = SessionPair.blocks(pair.clientEvents, id)
        #expect(blocks.map(\.kind) == [.informational, .response])
        #expect(blocks.last?.endStream == true)
    }

    @Test func neverIndexedFieldsStayNeverIndexed() throws {
        let pair = try SessionPair()
        let secret = HTTP2HeaderField("authorization", "Bearer t0ken", neverIndexed: true)
        let id = try pair.client.submitRequest(
            Fields.get() + [secret, HTTP2HeaderField("accept", "*/*")], endStream: true)
        try pair.pump()
        let fields = SessionPair.blocks(pair.serverEvents, id).first?.fields ?? []
        #expect(fields.first { $0.nameText == "authorization" }?.neverIndexed == true)
        #expect(fields.first { $0.nameText == "accept" }?.neverIndexed == false)
    }

    @Test func valuesThatAreNotUTF8PassThroughUnchanged() throws {
        let pair = try SessionPair()
        let latin1 = HTTP2HeaderField(name: Array("x-name".utf8), value: [0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72])
        let id = try pair.client.submitRequest(Fields.get() + [latin1], endStream: true)
        try pair.pump()
        #expect(SessionPair.blocks(pair.serverEvents, id).first?.fields.last == latin1)
    }
}

@Suite struct HTTP2DeferredBodyTests {
    @Test func trailersAfterABodyThatWasAlreadySent() throws {
        let pair = try SessionPair()
        let id = try pair.client.submitRequest(Fields.get("/t"), endStream: true)
        try pair.pump()
        try pair.server.submitResponse(streamID: id, Fields.status(200), endStream: false)
        pair.server.send(Array("first".utf8), on: id)
        try pair.pump()
        pair.server.finish(streamID: id, trailers: [HTTP2HeaderField("grpc-status", "0")])
        try pair.pump()
        #expect(SessionPair.blocks(pair.clientEvents, id).map(\.kind) == [.response, .trailers])
        #expect(pair.clientBody(id) == Array("first".utf8))
        #expect(pair.clientEvents.contains(.streamClosed(streamID: id, .noError)))
    }
}
