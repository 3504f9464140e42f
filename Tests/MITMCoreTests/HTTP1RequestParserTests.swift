import Testing

@testable import MITMCore

@Suite struct HTTP1RequestParserTests {
    @Test func requestWithoutBodyEndsWithItsHead() throws {
        let events = try parseEvents(
            .request, wire("GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n"))
        #expect(
            events == [
                requestHead("GET", "/index.html?q=1", ["Host": "example.com", "Accept": "*/*"]),
                end,
            ])
    }

    @Test func aConnectionsLaterHeadsHaveRoomForTheFieldsItsLastHeadHad() throws {
        // What the flow list keeps of a head then needs no copy to shed spare room (`ExchangeRecord.compact`).
        var parser = HTTP1Parser(role: .request)
        let head = "GET /a HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nX-Tag: one\r\n\r\n"
        _ = try parser.feed(wire(head))
        for _ in 0..<2 {
            guard case .requestHead(let second, _)? = try parser.feed(wire(head)).first else {
                Issue.record("a request head")
                return
            }
            #expect(second.headers.count == 3)
            #expect(second.headers.fields.capacity - second.headers.count <= 2)
        }
        // A head with more fields than the last one grows as before, and is read whole.
        let longer = try parser.feed(wire("GET /b HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n"))
        #expect(longer.first == requestHead("GET", "/b", ["A": "1", "B": "2", "C": "3", "D": "4", "E": "5"]))
    }

    @Test func repeatedHeadsOnOneConnectionAreReadAsSent() throws {
        // The second head shares strings with the first where a line repeats it byte for byte; every other line
        // (another case, another value, bytes that are not UTF-8, fields moved by one) is read on its own.
        var parser = HTTP1Parser(role: .request)
        let first = "GET /a HTTP/1.1\r\nHost: example.com\r\nUser-Agent: agent/1.0 (long enough)\r\nAccept: */*\r\n"
        #expect(
            try parser.feed(wire(first + "X-Tag: one\r\n\r\n")) == [
                requestHead(
                    "GET", "/a",
                    ["Host": "example.com", "User-Agent": "agent/1.0 (long enough)", "Accept": "*/*", "X-Tag": "one"]),
                end,
            ])
        #expect(
            try parser.feed(wire(first + "x-tag: one\r\n\r\n")).first
                == requestHead(
                    "GET", "/a",
                    ["Host": "example.com", "User-Agent": "agent/1.0 (long enough)", "Accept": "*/*", "x-tag": "one"]))
        let moved = try parser.feed(
            wire("GET /b HTTP/1.1\r\nX-First: 1\r\nHost: example.com\r\nUser-Agent: agent/1.0 (long enough)\r\n\r\n"))
        #expect(
            moved.first
                == requestHead(
                    "GET", "/b", ["X-First": "1", "Host": "example.com", "User-Agent": "agent/1.0 (long enough)"]))
        let latin1 = try parser.feed(
            wire("GET /c HTTP/1.1\r\nX-First: ") + [0xE9] + wire("\r\nHost: example.org\r\n\r\n"))
        guard case .requestHead(let head, _) = latin1.first else {
            Issue.record("no head in \(latin1)")
            return
        }
        #expect(head.headers.fields.map(\.name) == ["X-First", "Host"])
        #expect(head.headers.fields[0].receivedValueBytes == [0xE9])
        #expect(head.headers.first("host") == "example.org")
    }

    @Test func contentLengthBodyIsReadExactly() throws {
        let events = try parseEvents(
            .request, wire("POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world"))
        #expect(
            events == [
                requestHead("POST", "/upload", ["Host": "a", "Content-Length": "11"], framing: .contentLength(11)),
                body("hello world"),
                end,
            ])
    }

    @Test func zeroContentLengthMeansNoBody() throws {
        let events = try parseEvents(.request, wire("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
        #expect(events == [requestHead("POST", "/", ["Content-Length": "0"]), end])
    }

    @Test func repeatedIdenticalContentLengthsAreAccepted() throws {
        let listed = try parseEvents(.request, wire("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\nabc"))
        #expect(
            listed == [
                requestHead("POST", "/", ["Content-Length": "3, 3"], framing: .contentLength(3)), body("abc"), end,
            ])
        let repeated = try parseEvents(
            .request, wire("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"))
        #expect(repeated.dropFirst() == [body("abc"), end])
    }

    @Test func bodyBytesAreHandedOutAsTheyArrive() throws {
        var parser = HTTP1Parser(role: .request)
        let first = try parser.feed(wire("PUT /f HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"))
        #expect(
            first == [requestHead("PUT", "/f", ["Content-Length": "10"], framing: .contentLength(10)), body("abc")])
        #expect(try parser.feed(wire("defg")) == [body("defg")])
        #expect(try parser.feed(wire("hij")) == [body("hij"), end])
        #expect(parser.isIdle)
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() throws {
        let input = wire(
            "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n"
                + "6 ; quoted=\"a;b\"\r\n world\r\n"
                + "0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n"
        )
        let events = try parseEvents(.request, input)
        #expect(
            events == [
                requestHead("POST", "/c", ["Transfer-Encoding": "chunked"], framing: .chunked),
                body("hello world"),
                .end(trailers: ["X-Checksum": "abc", "X-Other": "1"]),
            ])
    }

    @Test func chunkedBodyWithoutTrailersEndsWithNilTrailers() throws {
        let events = try parseEvents(
            .request, wire("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n"))
        #expect(
            events == [
                requestHead("POST", "/", ["Transfer-Encoding": "chunked"], framing: .chunked), body("0123456789"), end,
            ])
    }

    @Test func chunkedAfterOtherCodingsFramesTheBody() throws {
        let events = try parseEvents(
            .request, wire("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"))
        #expect(
            events == [
                requestHead("POST", "/", ["Transfer-Encoding": "gzip, Chunked"], framing: .chunked), body("hi"), end,
            ])
    }

    @Test func pipelinedRequestsComeOutInOrderWithoutBodyLeaking() throws {
        let smuggled = "GET /admin HTTP/1.1\r\n\r\n"
        let input = wire(
            "POST /one HTTP/1.1\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)"
                + "GET /two HTTP/1.1\r\n\r\n"
                + "POST /three HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n"
                + "DELETE /four HTTP/1.0\r\n\r\n"
        )
        let events = try parseEvents(.request, input)
        #expect(
            events == [
                requestHead(
                    "POST", "/one", ["Content-Length": "\(smuggled.utf8.count)"],
                    framing: .contentLength(smuggled.utf8.count)),
                body(smuggled),
                end,
                requestHead("GET", "/two"),
                end,
                requestHead("POST", "/three", ["Transfer-Encoding": "chunked"], framing: .chunked),
                body("xyz"),
                end,
                requestHead("DELETE", "/four", version: .http1_0),
                end,
            ])
    }

    @Test func leadingEmptyLinesAreSkipped() throws {
        let events = try parseEvents(
            .request, wire("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"))
        #expect(events == [requestHead("GET", "/", ["Host": "a"]), end, requestHead("GET", "/2"), end])
    }

    @Test func fieldNamesAreTokensAsRFC9110DefinesThem() throws {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(HTTPSyntax.isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
        }
        let events = try parseEvents(
            .request, wire("GET / HTTP/1.1\r\nHost: a\r\nX-A~b|c`d^e: 1\r\nContent-Length: 0\r\n\r\n"))
        guard case .requestHead(let head, _)? = events.first else {
            Issue.record("no head")
            return
        }
        // Common names come from a table of spellings, others are read as sent: both keep their bytes.
        #expect(head.headers.fields.map(\.name) == ["Host", "X-A~b|c`d^e", "Content-Length"])
        #expect(throws: HTTP1ParseError.self) { try parseEvents(.request, wire("GET / HTTP/1.1\r\nX[1]: 1\r\n\r\n")) }
    }

    @Test func theEightBytesAtATimeValueCheckAgreesWithTheByteRule() {
        for byte in UInt8.min...UInt8.max {
            for position in 0..<19 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 19)
                bytes[position] = byte
                let printable = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
                for length in [position + 1, 19] {
                    let answer = bytes[..<length].withUnsafeBufferPointer { HTTPSyntax.isPrintableASCII($0) }
                    #expect(answer == printable, "byte \(byte) at \(position) of \(length)")
                }
            }
        }
    }

    @Test func fieldValuesAreTrimmedAndKeepTheirCase() throws {
        let events = try parseEvents(
            .request, wire("GET / HTTP/1.1\r\nX-Spaced: \t padded value \t\r\nX-Empty:\r\nx-lower:Value\r\n\r\n"))
        #expect(
            events.first == requestHead("GET", "/", ["X-Spaced": "padded value", "X-Empty": "", "x-lower": "Value"]))
    }

    @Test func fieldValueBytesSurviveDecoding() throws {
        let utf8 = try parseEvents(.request, wire("GET / HTTP/1.1\r\nX-Name: café ☕\r\n\r\n"))
        #expect(utf8.first == requestHead("GET", "/", ["X-Name": "café ☕"]))
        let latin1Wire = wire("GET / HTTP/1.1\r\nX-Name: caf") + [0xE9] + wire("\r\n\r\n")
        let latin1 = try parseEvents(.request, latin1Wire)
        guard case .requestHead(let head, _)? = latin1.first else {
            Issue.record("no head: \(latin1)")
            return
        }
        #expect(head.headers.first("x-name") == "café")
        #expect(
            head.serialized() == latin1Wire, "bytes that are not UTF-8 are written back unchanged, never transcoded")
    }

    @Test func aFieldSetAgainIsWrittenAsText() throws {
        let events = try parseEvents(.request, wire("GET / HTTP/1.1\r\nX-Name: ") + [0xFF] + wire("\r\n\r\n"))
        guard case .requestHead(var head, _)? = events.first else {
            Issue.record("no head: \(events)")
            return
        }
        head.headers.fields[0].value = "é"
        #expect(head.serialized() == wire("GET / HTTP/1.1\r\nX-Name: é\r\n\r\n"))
    }

    @Test func connectPausesAndKeepsTunnelBytes() throws {
        var parser = HTTP1Parser(role: .request)
        let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC]
        let events = try parser.feed(
            wire("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n") + clientHello.prefix(4))
        #expect(events == [requestHead("CONNECT", "example.com:443", ["Host": "example.com:443"]), end])
        #expect(parser.isPaused)
        #expect(!parser.isIdle)
        #expect(try parser.feed(clientHello.dropFirst(4)) == [])
        #expect(parser.bufferedByteCount == clientHello.count)
        #expect(parser.takeBufferedBytes() == clientHello)
        #expect(parser.takeBufferedBytes() == [])
        #expect(try parser.finish() == [])
    }

    @Test func connectWithContentLengthStillHasNoBody() throws {
        var parser = HTTP1Parser(role: .request)
        let events = try parser.feed(wire("CONNECT h:1 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"))
        #expect(events == [requestHead("CONNECT", "h:1", ["Content-Length": "3"]), end])
        #expect(parser.takeBufferedBytes() == wire("abc"))
    }

    @Test func upgradeRequestPausesAndCanResumeWhenRefused() throws {
        var parser = HTTP1Parser(role: .request)
        let upgrade = "GET /chat HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n"
        let events = try parser.feed(wire(upgrade + "GET /next HTTP/1.1\r\n\r\n"))
        #expect(
            events == [
                requestHead(
                    "GET", "/chat", ["Host": "a", "Connection": "keep-alive, Upgrade", "Upgrade": "websocket"]), end,
            ])
        #expect(parser.isPaused)
        #expect(try parser.resume() == [requestHead("GET", "/next"), end])
        #expect(!parser.isPaused)
        #expect(parser.isIdle)
    }

    @Test func upgradeRequestWithBodyPausesAfterTheBody() throws {
        var parser = HTTP1Parser(role: .request)
        let events = try parser.feed(
            wire("POST / HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nhi\u{1}\u{2}"))
        #expect(events.suffix(2) == [body("hi"), end])
        #expect(parser.isPaused)
        #expect(parser.takeBufferedBytes() == [1, 2])
    }

    @Test func upgradeHeaderWithoutConnectionOptionDoesNotPause() throws {
        var parser = HTTP1Parser(role: .request)
        _ = try parser.feed(wire("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"))
        #expect(!parser.isPaused)
        #expect(parser.isIdle)
    }

    @Test func idleStateFollowsTheMessage() throws {
        var parser = HTTP1Parser(role: .request)
        #expect(parser.isIdle)
        _ = try parser.feed(wire("GET / HT"))
        #expect(!parser.isIdle)
        _ = try parser.feed(wire("TP/1.1\r\nHost: a\r\n"))
        #expect(!parser.isIdle)
        _ = try parser.feed(wire("\r\n"))
        #expect(parser.isIdle)
        _ = try parser.feed(wire("POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\n"))
        #expect(!parser.isIdle)
        _ = try parser.feed(wire("x"))
        #expect(parser.isIdle)
        #expect(try parser.finish() == [])
    }

    @Test func keepAliveFollowsVersionAndConnection() {
        #expect(HTTPRequestHead(method: "GET", target: "/").keepAlive)
        #expect(!HTTPRequestHead(method: "GET", target: "/", headers: ["Connection": "Close"]).keepAlive)
        #expect(!HTTPRequestHead(method: "GET", target: "/", version: .http1_0).keepAlive)
        #expect(
            HTTPRequestHead(method: "GET", target: "/", version: .http1_0, headers: ["Connection": "Keep-Alive"])
                .keepAlive)
        #expect(
            !HTTPRequestHead(
                method: "GET", target: "/", version: .http1_0, headers: ["Connection": "keep-alive, close"]
            ).keepAlive)
        #expect(HTTPResponseHead(status: 200, reason: "OK", headers: ["Connection": "upgrade"]).keepAlive)
        #expect(
            !HTTPResponseHead(status: 200, reason: "OK", headers: ["Connection": "foo", "Connection": "close"])
                .keepAlive)
    }

    @Test func partialHeadLinesAreNotScannedAgain() throws {
        var parser = HTTP1Parser(role: .request)
        _ = try parser.feed(wire("GET / HTTP/1.1\r\nX-A: aaaa"))
        #expect(parser.blockBytes == 16)
        #expect(parser.scannedWithoutNewline == 9)
        _ = try parser.feed(wire("bb"))
        #expect(parser.scannedWithoutNewline == 11)
        _ = try parser.feed(wire("\r\n"))
        #expect(parser.scannedWithoutNewline == 0)
        #expect(parser.fields == [HTTPHeaderField(name: "X-A", value: "aaaabb")])
    }

    /// An idle keep-alive connection gives back its parser's buffer; bytes still waiting are never dropped, and the
    /// next request parses as on a fresh parser.
    @Test func releasingAnIdleBufferKeepsWaitingBytesAndTheNextRequestParses() throws {
        let first = wire("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n")
        let second = wire("POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi")
        var parser = HTTP1Parser(role: .request)
        var events = try parser.feed(first[...])
        events += try parser.feed(second.prefix(20))
        parser.releaseIdleBuffer()  // the second head is half there: its start line is read, "Ho" waits and is kept
        #expect(parser.bufferedByteCount == 2)
        events += try parser.feed(second.dropFirst(20))
        parser.releaseIdleBuffer()
        #expect(parser.bufferedByteCount == 0)
        events += try parser.feed(first[...])
        #expect(events == (try parseEvents(.request, first + second + first)))
    }
}
