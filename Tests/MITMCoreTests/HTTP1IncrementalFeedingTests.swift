import Testing

@testable import MITMCore

@Suite struct HTTP1IncrementalFeedingTests {
    struct Sample: Sendable, CustomStringConvertible {
        var name: String
        var role: HTTP1Parser.Role
        var methods: [String] = []
        var input: [UInt8]
        var closing = false
        var description: String { name }
    }

    static let corpus: [Sample] = [
        Sample(name: "GET without body", role: .request, input: wire("GET / HTTP/1.1\r\nHost: a\r\n\r\n")),
        Sample(name: "leading blank lines", role: .request, input: wire("\r\n\r\nGET /x HTTP/1.0\r\nHost: b\r\n\r\n")),
        Sample(
            name: "Content-Length body", role: .request,
            input: wire("POST /p HTTP/1.1\r\nContent-Length: 13\r\n\r\nhello, world!")),
        Sample(
            name: "chunked with extensions and trailers", role: .request,
            input: wire(
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\nU: 2\r\n\r\n"
            )),
        Sample(
            name: "pipelined requests", role: .request,
            input: wire(
                "GET /1 HTTP/1.1\r\n\r\nPOST /2 HTTP/1.1\r\nContent-Length: 4\r\n\r\nGET POST /3 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\nHEAD /4 HTTP/1.1\r\n\r\n"
            )),
        Sample(
            name: "CONNECT then tunnel bytes", role: .request,
            input: wire("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n\u{16}\u{3}\u{1}rest")),
        Sample(
            name: "upgrade request", role: .request,
            input: wire("GET /ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nframes")),
        Sample(
            name: "obs-text value", role: .request,
            input: wire("GET / HTTP/1.1\r\nX: caf") + [0xE9, 0xFF] + wire("\r\n\r\n")),
        Sample(
            name: "Content-Length response", role: .response, methods: ["GET"],
            input: wire("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody")),
        Sample(
            name: "close-delimited response", role: .response, methods: ["GET"],
            input: wire("HTTP/1.0 200 OK\r\n\r\nall of this until close\r\n\r\n"), closing: true),
        Sample(
            name: "HEAD response then GET response", role: .response, methods: ["HEAD", "GET"],
            input: wire("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!")),
        Sample(
            name: "100-continue then 200", role: .response, methods: ["POST"],
            input: wire(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfinal\r\n0\r\n\r\n"
            )),
        Sample(
            name: "204 and 304", role: .response, methods: ["DELETE", "GET"],
            input: wire("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n")),
        Sample(
            name: "101 then websocket bytes", role: .response, methods: ["GET"],
            input: wire("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\u{81}\u{0}")),
        Sample(
            name: "CONNECT 200 then TLS bytes", role: .response, methods: ["CONNECT"],
            input: wire("HTTP/1.1 200 Connection established\r\n\r\n\u{16}\u{3}\u{3}")),
        Sample(
            name: "chunked response with trailers", role: .response, methods: ["GET"],
            input: wire(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nExpires: never\r\n\r\n"
            )),
    ]

    /// Events, remaining buffered bytes and pause state after feeding `sample` in pieces of `pieceSize`.
    static func run(_ sample: Sample, pieceSize: Int?) throws(HTTP1ParseError) -> (
        events: [HTTP1Event], rest: [UInt8], paused: Bool
    ) {
        var parser = HTTP1Parser(role: sample.role)
        for method in sample.methods {
            parser.expectResponse(toMethod: method)
        }
        var events: [HTTP1Event] = []
        let size = pieceSize ?? max(sample.input.count, 1)
        var start = 0
        while start < sample.input.count {
            let end = min(start + size, sample.input.count)
            events += try parser.feed(sample.input[start..<end])
            start = end
        }
        if sample.closing {
            events += try parser.finish()
        }
        #expect(!events.contains(.body([])))
        return (mergingBodies(events), parser.takeBufferedBytes(), parser.isPaused)
    }

    @Test(arguments: corpus)
    func feedingInPiecesGivesTheSameResultAsOneFeed(_ sample: Sample) throws {
        let whole = try Self.run(sample, pieceSize: nil)
        #expect(whole.events.count >= 2)
        for pieceSize in [1, 2, 3, 7, 16, 100] {
            let pieces = try Self.run(sample, pieceSize: pieceSize)
            #expect(pieces.events == whole.events, "piece size \(pieceSize)")
            #expect(pieces.rest == whole.rest, "piece size \(pieceSize)")
            #expect(pieces.paused == whole.paused, "piece size \(pieceSize)")
        }
    }

    @Test func largeContentLengthBodyStreamsWithoutBuffering() throws {
        let bodyLength = 8 << 20
        let piece = [UInt8](repeating: 0x5A, count: 65_536)
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        var received = 0
        var ended = false
        for event in try parser.feed(wire("HTTP/1.1 200 OK\r\nContent-Length: \(bodyLength)\r\n\r\n")) {
            if case .end = event { ended = true }
        }
        for _ in 0..<(bodyLength / piece.count) {
            for event in try parser.feed(piece) {
                switch event {
                case .body(let bytes): received += bytes.count
                case .end: ended = true
                default: Issue.record("unexpected \(event)")
                }
            }
            #expect(parser.bufferedByteCount == 0)
        }
        #expect(received == bodyLength)
        #expect(ended)
        #expect(parser.isIdle)
    }

    @Test func largeChunkedBodyKeepsTheBufferSmall() throws {
        let chunk = HTTP1Chunked.encodeChunk([UInt8](repeating: 0x61, count: 10_000))
        var stream: [UInt8] = []
        for _ in 0..<800 {
            stream += chunk
        }
        stream += HTTP1Chunked.lastChunk(trailers: nil)
        var parser = HTTP1Parser(role: .request)
        _ = try parser.feed(wire("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"))
        var received = 0
        var ended = false
        var largestBuffer = 0
        var start = 0
        while start < stream.count {
            let end = min(start + 65_537, stream.count)
            for event in try parser.feed(stream[start..<end]) {
                if case .body(let bytes) = event { received += bytes.count }
                if case .end = event { ended = true }
            }
            largestBuffer = max(largestBuffer, parser.buffer.count)
            start = end
        }
        #expect(received == 8_000_000)
        #expect(ended)
        #expect(largestBuffer <= 2 * 65_537)
    }
}
