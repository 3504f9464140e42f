import Testing

@testable import MITMCore

@Suite struct HTTP1ChunkedTests {
    static let chunkedHead = "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"

    @Test func encodesAChunkWithLowercaseHexSize() {
        #expect(HTTP1Chunked.encodeChunk(wire("hello")) == wire("5\r\nhello\r\n"))
        let big = [UInt8](repeating: 0x41, count: 300)
        #expect(HTTP1Chunked.encodeChunk(big) == wire("12c\r\n") + big + wire("\r\n"))
        #expect(HTTP1Chunked.encodeChunk(wire("xhix").dropFirst().dropLast()) == wire("2\r\nhi\r\n"))
    }

    @Test func emptyDataNeverBecomesTheLastChunk() {
        #expect(HTTP1Chunked.encodeChunk([UInt8]()) == [])
        #expect(HTTP1Chunked.encodeChunk(wire("abc")[3...]) == [])
    }

    @Test func lastChunkCarriesTrailers() {
        #expect(HTTP1Chunked.lastChunk(trailers: nil) == wire("0\r\n\r\n"))
        #expect(HTTP1Chunked.lastChunk(trailers: [:]) == wire("0\r\n\r\n"))
        #expect(
            HTTP1Chunked.lastChunk(trailers: ["Digest": "sha-256=abc", "X-B": "2"])
                == wire("0\r\nDigest: sha-256=abc\r\nX-B: 2\r\n\r\n"))
    }

    @Test func encodedBodiesParseBackToTheSameBytes() throws {
        let pieces: [[UInt8]] = [
            wire("a"), [], [UInt8](repeating: 0, count: 4096), (0..<255).map { UInt8($0) }, wire("\r\n0\r\n\r\n"),
        ]
        var input = wire(Self.chunkedHead)
        for piece in pieces {
            input += HTTP1Chunked.encodeChunk(piece)
        }
        input += HTTP1Chunked.lastChunk(trailers: ["X-Sum": "42"])
        for pieceSize in [nil, 1, 5, 1000] {
            let events = try parseEvents(.request, input, pieceSize: pieceSize)
            #expect(
                events == [
                    requestHead("POST", "/c", ["Transfer-Encoding": "chunked"], framing: .chunked),
                    .body(pieces.flatMap { $0 }),
                    .end(trailers: ["X-Sum": "42"]),
                ])
        }
    }

    @Test func chunkDataIsHandedOutBeforeTheChunkIsComplete() throws {
        var parser = HTTP1Parser(role: .request)
        #expect(
            try parser.feed(wire(Self.chunkedHead + "a\r\n012")) == [
                requestHead("POST", "/c", ["Transfer-Encoding": "chunked"], framing: .chunked), body("012"),
            ])
        #expect(try parser.feed(wire("3456")) == [body("3456")])
        #expect(try parser.feed(wire("789\r")) == [body("789")])
        #expect(try parser.feed(wire("\n2\r\nab\r\n0\r\n")) == [body("ab")])
        #expect(try parser.feed(wire("\r\n")) == [end])
    }

    @Test func sizeSyntaxVariantsAreAccepted() throws {
        let input = wire(
            Self.chunkedHead + "000A\r\n0123456789\r\nb\t;e\r\nhello world\r\n1 ;a=b;c\r\n!\r\n0;final\r\n\r\n")
        let events = try parseEvents(.request, input)
        #expect(events.dropFirst() == [body("0123456789hello world!"), end])
    }

    @Test func trailersMayRepeatAndKeepOrder() throws {
        let events = try parseEvents(.request, wire(Self.chunkedHead + "0\r\nX-A: 1\r\nx-a: 2\r\nX-B:3\r\n\r\n"))
        #expect(
            events.last
                == .end(
                    trailers: HTTPHeaders([
                        HTTPHeaderField(name: "X-A", value: "1"),
                        HTTPHeaderField(name: "x-a", value: "2"),
                        HTTPHeaderField(name: "X-B", value: "3"),
                    ])))
    }
}
