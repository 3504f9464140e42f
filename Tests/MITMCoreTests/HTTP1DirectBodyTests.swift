import Testing

@testable import MITMCore

/// A relay may forward plain body bytes itself (no copy into an event) and tell the parser with `skipBody`; framing
/// must come out the same as if the bytes had been fed.
@Suite struct HTTP1DirectBodyTests {
    @Test func aSkippedContentLengthBodyEndsTheMessageAndTheNextOneParses() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        parser.expectResponse(toMethod: "GET")
        #expect(
            try parser.feed(wire("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")) == [
                responseHead(200, "OK", ["Content-Length": "10"], framing: .contentLength(10))
            ])
        #expect(parser.directBodyBytes == 10)
        #expect(parser.skipBody(4) == [])
        #expect(parser.directBodyBytes == 6)
        #expect(parser.skipBody(6) == [end])
        #expect(parser.directBodyBytes == 0, "a head comes next")
        #expect(
            try parser.feed(wire("HTTP/1.1 204 No Content\r\n\r\n")) == [responseHead(204, "No Content", [:]), end])
        #expect(parser.isIdle)
    }

    @Test func bytesKeptFromBeforeAndChunkFramingAreNeverDirect() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        _ = try parser.feed(wire("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
        #expect(parser.directBodyBytes == 0, "chunk sizes must be parsed")
        var request = HTTP1Parser(role: .request)
        _ = try request.feed(wire("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nab"))
        #expect(request.directBodyBytes == 1)
        #expect(request.skipBody(1) == [end])
    }

    @Test func aCloseDelimitedBodyIsDirectUntilThePeerCloses() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        _ = try parser.feed(wire("HTTP/1.0 200 OK\r\n\r\n"))
        #expect(parser.directBodyBytes == Int.max)
        #expect(parser.skipBody(1_000) == [])
        #expect(try parser.finish() == [end])
    }
}
