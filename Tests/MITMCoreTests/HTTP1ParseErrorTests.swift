import Testing

@testable import MITMCore

@Suite struct HTTP1ParseErrorTests {
    struct Case: Sendable, CustomStringConvertible {
        var input: String
        var kind: HTTP1ParseError.Kind
        var reasonContains: String
        var description: String { HTTPSyntax.quoted(input) }
    }

    static let badRequests: [Case] = [
        Case(input: "GET /\r\n\r\n", kind: .badStartLine, reasonContains: "no HTTP version"),
        Case(input: "GET\r\n\r\n", kind: .badStartLine, reasonContains: "no spaces"),
        Case(input: "GET  / HTTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "request target"),
        Case(input: "GET / HTTP/1.1 extra\r\n\r\n", kind: .badStartLine, reasonContains: "more than two spaces"),
        Case(input: "G@T / HTTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "not a token"),
        Case(input: " GET / HTTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "not a token"),
        Case(input: "GET / FTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "no valid HTTP version"),
        Case(input: "GET /caf\u{E9} HTTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "visible ASCII"),
        Case(input: "GET / HTTP/1.1\r\r\n\r\n", kind: .badStartLine, reasonContains: "control character"),
        Case(input: "GET /\u{0} HTTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "control character"),
        Case(input: "GET / HTTP/2.0\r\n\r\n", kind: .badVersion, reasonContains: "HTTP/2.0"),
        Case(input: "GET / HTTP/1.2\r\n\r\n", kind: .badVersion, reasonContains: "HTTP/1.2"),
        Case(input: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", kind: .badVersion, reasonContains: "not supported"),
        Case(
            input: "GET / HTTP/1.1\r\nHost: a\r\nNoColonHere\r\n\r\n", kind: .badHeader,
            reasonContains: "header line 2 has no colon"),
        Case(
            input: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", kind: .badHeader,
            reasonContains: "whitespace between the field name and the colon"),
        Case(
            input: "GET / HTTP/1.1\r\nX-A: 1\r\n  continued\r\n\r\n", kind: .badHeader,
            reasonContains: "obsolete line folding"),
        Case(input: "GET / HTTP/1.1\r\n\tX-A: 1\r\n\r\n", kind: .badHeader, reasonContains: "obsolete line folding"),
        Case(input: "GET / HTTP/1.1\r\nX(A): 1\r\n\r\n", kind: .badHeader, reasonContains: "invalid field name"),
        Case(input: "GET / HTTP/1.1\r\n: empty-name\r\n\r\n", kind: .badHeader, reasonContains: "invalid field name"),
        Case(input: "GET / HTTP/1.1\r\nX-A\u{0}: 1\r\n\r\n", kind: .badHeader, reasonContains: "invalid field name"),
        Case(input: "GET / HTTP/1.1\r\nX-A: a\u{0}b\r\n\r\n", kind: .badHeader, reasonContains: "control character"),
        Case(input: "GET / HTTP/1.1\r\nX-A: a\rb\r\n\r\n", kind: .badHeader, reasonContains: "control character"),
        Case(input: "GET / HTTP/1.1\r\nX-A: a\u{7F}\r\n\r\n", kind: .badHeader, reasonContains: "control character"),
        Case(
            input: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", kind: .badHeader,
            reasonContains: "more than one Host"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 12a\r\n\r\n", kind: .badContentLength,
            reasonContains: "Content-Length \"12a\" is not a number"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", kind: .badContentLength,
            reasonContains: "not a number"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", kind: .badContentLength,
            reasonContains: "not a number"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", kind: .badContentLength, reasonContains: "not a number"
        ),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 5,\r\n\r\n", kind: .badContentLength,
            reasonContains: "not a number"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", kind: .badContentLength,
            reasonContains: "not a number"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n", kind: .badContentLength,
            reasonContains: "5 and 6 disagree"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 7\r\n\r\n", kind: .badContentLength,
            reasonContains: "5 and 7 disagree"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", kind: .badChunk,
            reasonContains: "hex number"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n", kind: .badChunk,
            reasonContains: "junk after the size"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n", kind: .badChunk,
            reasonContains: "hex number"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", kind: .badChunk,
            reasonContains: "hex number"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", kind: .badChunk,
            reasonContains: "too large"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=\u{0}\r\n", kind: .badChunk,
            reasonContains: "control characters"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", kind: .badChunk,
            reasonContains: "not followed by CRLF"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\rX", kind: .badChunk,
            reasonContains: "not followed by CRLF"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nNo colon\r\n\r\n", kind: .badHeader,
            reasonContains: "trailer line 1 has no colon"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", kind: .unsupportedTransferEncoding,
            reasonContains: "does not end in chunked"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", kind: .unsupportedTransferEncoding,
            reasonContains: "does not end in chunked"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            kind: .unsupportedTransferEncoding, reasonContains: "more than once"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: \r\nContent-Length: 1\r\n\r\n", kind: .badHeader,
            reasonContains: "no transfer coding"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            kind: .badContentLength, reasonContains: "ambiguous"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
            kind: .badContentLength, reasonContains: "ambiguous"),
        Case(input: "GET / HTTP/1.1\nHost: a\r\n\r\n", kind: .badStartLine, reasonContains: "bare LF"),
        Case(input: "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", kind: .badHeader, reasonContains: "bare LF"),
        Case(input: "GET / HTTP/1.1\r\nHost: a\r\n\n", kind: .badHeader, reasonContains: "bare LF"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", kind: .badChunk,
            reasonContains: "bare LF"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n", kind: .badChunk,
            reasonContains: "not followed by CRLF"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\n\r\n", kind: .badHeader,
            reasonContains: "bare LF"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n", kind: .badChunk,
            reasonContains: "whitespace after the size"),
        Case(
            input: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n", kind: .badChunk,
            reasonContains: "hex number"),
        Case(
            input: "POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", kind: .badContentLength,
            reasonContains: "not a number"),
    ]

    @Test(arguments: badRequests)
    func malformedRequestsAreRejected(_ testCase: Case) throws {
        let error = try #require(parseFailure(.request, wire(testCase.input)))
        #expect(error.kind == testCase.kind)
        #expect(error.reason.contains(testCase.reasonContains), "reason was: \(error.reason)")
        #expect(error.suggestedStatus == HTTP1ParseError.requestStatus(for: testCase.kind))
        #expect(parseFailure(.request, wire(testCase.input), pieceSize: 1) == error)
    }

    @Test func suggestedStatusesForRequests() {
        #expect(HTTP1ParseError(.badStartLine, "x").suggestedStatus == 400)
        #expect(HTTP1ParseError(.badHeader, "x").suggestedStatus == 400)
        #expect(HTTP1ParseError(.badContentLength, "x").suggestedStatus == 400)
        #expect(HTTP1ParseError(.badChunk, "x").suggestedStatus == 400)
        #expect(HTTP1ParseError(.truncated, "x").suggestedStatus == 400)
        #expect(HTTP1ParseError(.headersTooLarge, "x").suggestedStatus == 431)
        #expect(HTTP1ParseError(.unsupportedTransferEncoding, "x").suggestedStatus == 400)
        #expect(HTTP1ParseError(.badVersion, "x").suggestedStatus == 505)
        #expect(
            HTTP1ParseError(.badHeader, "header line 3 has no colon").description
                == "badHeader: header line 3 has no colon")
    }

    static let badResponses: [Case] = [
        Case(input: "HTTP/1.1 2000 OK\r\n\r\n", kind: .badStartLine, reasonContains: "three-digit status"),
        Case(input: "HTTP/1.1 20 OK\r\n\r\n", kind: .badStartLine, reasonContains: "three-digit status"),
        Case(input: "HTTP/1.1 099 Odd\r\n\r\n", kind: .badStartLine, reasonContains: "three-digit status"),
        Case(input: "HTTP/1.1\r\n\r\n", kind: .badStartLine, reasonContains: "three-digit status"),
        Case(input: "HTTP/1.1 200 O\u{1}K\r\n\r\n", kind: .badStartLine, reasonContains: "control character"),
        Case(input: "ICY 200 OK\r\n\r\n", kind: .badStartLine, reasonContains: "does not start with an HTTP version"),
        Case(input: "HTTP/2 200 OK\r\n\r\n", kind: .badVersion, reasonContains: "HTTP/2"),
        Case(
            input: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", kind: .badContentLength,
            reasonContains: "disagree"),
        Case(
            input: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", kind: .unsupportedTransferEncoding,
            reasonContains: "more than once"),
        Case(
            input: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            kind: .badContentLength, reasonContains: "ambiguous"),
        Case(
            input: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc", kind: .unsupportedTransferEncoding,
            reasonContains: "does not end in chunked"),
        Case(input: "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", kind: .badStartLine, reasonContains: "bare LF"),
        Case(
            input: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", kind: .badChunk,
            reasonContains: "too large"),
        Case(
            input: "HTTP/1.1 200 OK\r\nSet-Cookie: a=b\r\n continued\r\n\r\n", kind: .badHeader,
            reasonContains: "header line 2"),
    ]

    @Test(arguments: badResponses)
    func malformedResponsesSuggestBadGateway(_ testCase: Case) throws {
        let error = try #require(parseFailure(.response, wire(testCase.input), methods: ["GET"]))
        #expect(error.kind == testCase.kind)
        #expect(error.reason.contains(testCase.reasonContains), "reason was: \(error.reason)")
        #expect(error.suggestedStatus == 502)
    }

    @Test func truncatedMessagesAreReportedOnFinish() throws {
        let truncated = [
            "GET / HTTP/1.1\r\nHost: a\r\n",
            "GET / HT",
            "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\nX: y\r\n",
        ]
        for input in truncated {
            let error = try #require(parseFailure(.request, wire(input), closing: true), "\(input)")
            #expect(error.kind == .truncated)
            #expect(error.suggestedStatus == 400)
        }
        let short = try #require(
            parseFailure(.request, wire("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"), closing: true))
        #expect(short.reason == "connection closed with 7 bytes of the body missing")
        let response = try #require(
            parseFailure(.response, wire("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"), closing: true))
        #expect(response.kind == .truncated)
        #expect(response.suggestedStatus == 502)
    }

    @Test func closingBetweenMessagesIsNotAnError() throws {
        #expect(try parseEvents(.request, [], closing: true) == [])
        #expect(try parseEvents(.request, wire("\r\n\r\n"), closing: true) == [])
        #expect(
            try parseEvents(.request, wire("GET / HTTP/1.1\r\n\r\n"), closing: true) == [requestHead("GET", "/"), end])
    }

    @Test func aFailedParserStaysFailed() throws {
        var parser = HTTP1Parser(role: .request)
        let first: HTTP1ParseError
        do throws(HTTP1ParseError) {
            _ = try parser.feed(wire("GET / HTTP/1.1\r\nBad Header\r\n\r\n"))
            Issue.record("expected an error")
            return
        } catch {
            first = error
        }
        #expect(throws: first) { try parser.feed(wire("GET / HTTP/1.1\r\n\r\n")) }
        #expect(throws: first) { try parser.finish() }
        #expect(throws: first) { try parser.resume() }
    }
}
