import Testing

@testable import MITMCore

@Suite struct HTTP1ResponseParserTests {
    @Test func contentLengthResponse() throws {
        let events = try parseEvents(
            .response, wire("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"),
            methods: ["GET"])
        #expect(
            events == [
                responseHead(
                    200, "OK", ["Content-Length": "5", "Content-Type": "text/plain"], framing: .contentLength(5)),
                body("hello"), end,
            ])
    }

    @Test func closeDelimitedBodyEndsWhenThePeerCloses() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        #expect(
            try parser.feed(wire("HTTP/1.0 200 OK\r\nServer: old\r\n\r\nsome ")) == [
                responseHead(200, "OK", ["Server": "old"], version: .http1_0, framing: .closeDelimited), body("some "),
            ])
        #expect(try parser.feed(wire("GET / HTTP/1.1\r\n\r\n")) == [body("GET / HTTP/1.1\r\n\r\n")])
        #expect(try parser.finish() == [end])
        #expect(parser.isIdle)
        #expect(try parser.finish() == [])
    }

    @Test func chunkedResponseWithTrailers() throws {
        let events = try parseEvents(
            .response,
            wire(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: Server-Timing\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\nServer-Timing: db;dur=53\r\n\r\n"
            ),
            methods: ["GET"]
        )
        #expect(
            events == [
                responseHead(
                    200, "OK", ["Transfer-Encoding": "chunked", "Trailer": "Server-Timing"], framing: .chunked),
                body("Wikipedia"),
                .end(trailers: ["Server-Timing": "db;dur=53"]),
            ])
    }

    @Test func responseToHeadHasNoBodyDespiteContentLength() throws {
        let input = wire(
            "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
        )
        let events = try parseEvents(.response, input, methods: ["HEAD", "GET"])
        #expect(
            events == [
                responseHead(200, "OK", ["Content-Length": "1000"]),
                end,
                responseHead(200, "OK", ["Content-Length": "3"], framing: .contentLength(3)),
                body("abc"),
                end,
            ])
    }

    @Test(arguments: [(204, "No Content"), (304, "Not Modified")])
    func bodilessStatusesHaveNoBody(status: Int, reason: String) throws {
        let input = wire(
            "HTTP/1.1 \(status) \(reason)\r\nTransfer-Encoding: chunked\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        )
        let events = try parseEvents(.response, input, methods: ["GET", "GET"])
        #expect(
            events == [
                responseHead(status, reason, ["Transfer-Encoding": "chunked"]),
                end,
                responseHead(200, "OK", ["Content-Length": "0"]),
                end,
            ])
    }

    @Test func informationalResponsesPrecedeTheFinalOneWithoutConsumingTheMethod() throws {
        let input = wire(
            "HTTP/1.1 100 Continue\r\n\r\n"
                + "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        )
        let events = try parseEvents(.response, input, methods: ["HEAD", "POST"])
        #expect(
            events == [
                responseHead(100, "Continue"),
                end,
                responseHead(103, "Early Hints", ["Link": "</style.css>; rel=preload"]),
                end,
                responseHead(200, "OK", ["Content-Length": "5"]),
                end,
                responseHead(200, "OK", ["Content-Length": "2"], framing: .contentLength(2)),
                body("ok"),
                end,
            ])
    }

    @Test func switchingProtocolsPausesAndHandsOverTheRest() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        let frame: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
        let events = try parser.feed(
            wire("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
                + frame.prefix(3))
        #expect(
            events == [
                responseHead(101, "Switching Protocols", ["Upgrade": "websocket", "Connection": "Upgrade"]), end,
            ])
        #expect(parser.isPaused)
        #expect(try parser.feed(frame.dropFirst(3)) == [])
        #expect(try parser.finish() == [])
        #expect(parser.takeBufferedBytes() == frame)
    }

    @Test func successfulConnectResponsePausesTheParser() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "CONNECT")
        let events = try parser.feed(
            wire("HTTP/1.1 200 Connection Established\r\nContent-Length: 5\r\n\r\n\u{16}\u{03}\u{03}"))
        #expect(events == [responseHead(200, "Connection Established", ["Content-Length": "5"]), end])
        #expect(parser.isPaused)
        #expect(parser.takeBufferedBytes() == [0x16, 0x03, 0x03])
    }

    @Test func refusedConnectResponseHasABodyAndNoPause() throws {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "CONNECT")
        let events = try parser.feed(
            wire("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 4\r\n\r\ndeny"))
        #expect(
            events == [
                responseHead(407, "Proxy Authentication Required", ["Content-Length": "4"], framing: .contentLength(4)),
                body("deny"), end,
            ])
        #expect(!parser.isPaused)
        #expect(parser.isIdle)
    }

    @Test func reasonPhraseMayBeEmptyOrMissing() throws {
        let input = wire(
            "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\nHTTP/1.1 404\r\nContent-Length: 0\r\n\r\nHTTP/1.1 500 Internal  Server\tError\r\nContent-Length: 0\r\n\r\n"
        )
        let events = try parseEvents(.response, input)
        #expect(
            events == [
                responseHead(200, "", ["Content-Length": "0"]), end,
                responseHead(404, "", ["Content-Length": "0"]), end,
                responseHead(500, "Internal  Server\tError", ["Content-Length": "0"]), end,
            ])
    }

    @Test func pipelinedResponsesFollowTheMethodQueue() throws {
        let input = wire(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\none\r\n0\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
                + "HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\ntwo"
        )
        let events = try parseEvents(.response, input, methods: ["GET", "HEAD", "POST"])
        #expect(
            events == [
                responseHead(200, "OK", ["Transfer-Encoding": "chunked"], framing: .chunked), body("one"), end,
                responseHead(200, "OK", ["Content-Length": "99"]), end,
                responseHead(201, "Created", ["Content-Length": "3"], framing: .contentLength(3)), body("two"), end,
            ])
    }

    @Test func responseWithoutAQueuedMethodIsFramedLikeAGetResponse() throws {
        let events = try parseEvents(.response, wire("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"))
        #expect(
            events == [responseHead(200, "OK", ["Content-Length": "2"], framing: .contentLength(2)), body("hi"), end])
    }
}
