import Testing

@testable import MITMCore

@Suite struct HTTP1HeaderLimitTests {
    static let startLine = "GET / HTTP/1.1\r\n"

    /// A request whose head (blank line included) is exactly `length` bytes.
    static func request(headLength length: Int) -> [UInt8] {
        let prefix = startLine + "X-Fill: "
        let filler = String(repeating: "a", count: length - prefix.utf8.count - 4)
        return wire(prefix + filler + "\r\n\r\n")
    }

    @Test func headsUpToTheLimitAreAccepted() throws {
        for length in [65_535, 65_536] {
            let input = Self.request(headLength: length)
            #expect(input.count == length)
            let events = try parseEvents(.request, input)
            #expect(events.count == 2)
            #expect(try parseEvents(.request, input, pieceSize: 4096) == events)
        }
    }

    @Test func headOneByteOverTheLimitIsRejected() throws {
        let error = try #require(parseFailure(.request, Self.request(headLength: 65_537)))
        #expect(error.kind == .headersTooLarge)
        #expect(error.suggestedStatus == 431)
        #expect(error.reason == "message head is longer than 65536 bytes")
    }

    @Test func endlessHeaderLinesFailWhileStillArriving() throws {
        var parser = HTTP1Parser(role: .request)
        var fed = 0
        var failure: HTTP1ParseError?
        let line = wire("X-Endless: " + String(repeating: "b", count: 100) + "\r\n")
        do throws(HTTP1ParseError) {
            _ = try parser.feed(wire(Self.startLine))
            fed += Self.startLine.utf8.count
            while fed < 1_000_000 {
                _ = try parser.feed(line)
                fed += line.count
            }
        } catch {
            failure = error
        }
        #expect(failure?.kind == .headersTooLarge)
        #expect(fed > 65_536 - line.count && fed <= 65_536)
    }

    @Test func anEndlessLineFailsWhileStillArriving() throws {
        for prefix in ["GET / HTTP/1.1\r\nX-Long: ", "GET /"] {
            var parser = HTTP1Parser(role: .request)
            var fed = 0
            var failure: HTTP1ParseError?
            let piece = [UInt8](repeating: UInt8(ascii: "c"), count: 1000)
            do throws(HTTP1ParseError) {
                _ = try parser.feed(wire(prefix))
                fed += prefix.utf8.count
                while fed < 1_000_000 {
                    _ = try parser.feed(piece)
                    fed += piece.count
                }
            } catch {
                failure = error
            }
            #expect(failure?.kind == .headersTooLarge)
            #expect(fed < 65_536 && fed + piece.count >= 65_536)
        }
    }

    @Test func theLimitIsConfigurable() throws {
        let head = wire("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(try parseEvents(.request, head, maxHeaderBytes: head.count).count == 2)
        #expect(parseFailure(.request, head, maxHeaderBytes: head.count - 1)?.kind == .headersTooLarge)
        #expect(parseFailure(.request, head, pieceSize: 1, maxHeaderBytes: head.count - 1)?.kind == .headersTooLarge)
    }

    @Test func bytesAfterTheHeadAndLeadingBlankLinesDoNotCount() throws {
        let head = Self.request(headLength: 65_536)
        let input = wire("\r\n\r\n") + head + wire("GET /next HTTP/1.1\r\n\r\n")
        let events = try parseEvents(.request, input)
        #expect(events.count == 4)
    }

    @Test func trailersHaveTheirOwnLimit() throws {
        let head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n"
        func trailers(length: Int) -> String {
            "X-T: " + String(repeating: "t", count: length - 9) + "\r\n\r\n"
        }
        #expect(trailers(length: 200).utf8.count == 200)
        let accepted = try parseEvents(.request, wire(head + trailers(length: 200)), maxHeaderBytes: 200)
        #expect(accepted.last == .end(trailers: ["X-T": String(repeating: "t", count: 191)]))
        let error = parseFailure(.request, wire(head + trailers(length: 201)), maxHeaderBytes: 200)
        #expect(error?.kind == .headersTooLarge)
        #expect(error?.reason == "trailer section is longer than 200 bytes")
        let streaming = parseFailure(
            .request, wire(head + "X-T: " + String(repeating: "t", count: 300)), pieceSize: 10, maxHeaderBytes: 200)
        #expect(streaming?.kind == .headersTooLarge)
    }

    @Test func chunkSizeLinesAreLimited() throws {
        let head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        let longestAccepted = "1;" + String(repeating: "e", count: 1020) + "\r\n"
        #expect(longestAccepted.utf8.count == 1024)
        let events = try parseEvents(.request, wire(head + longestAccepted + "x\r\n0\r\n\r\n"))
        #expect(events.dropFirst() == [body("x"), end])
        let tooLong = parseFailure(.request, wire(head + "1;" + String(repeating: "e", count: 1021) + "\r\n"))
        #expect(tooLong?.kind == .badChunk)
        #expect(tooLong?.reason == "chunk size line is longer than 1024 bytes")
        let endless = parseFailure(.request, wire(head + "1;" + String(repeating: "e", count: 5000)), pieceSize: 100)
        #expect(endless?.kind == .badChunk)
    }

    /// Found by the http1-response fuzz target: the length check came after the bare-LF check, so the answer (431 or
    /// 400) depended on how the bytes were split.
    @Test func anOverlongLineEndingInABareLFIsTooLargeHoweverItArrives() {
        for role in [HTTP1Parser.Role.request, .response] {
            let start = role == .request ? "GET / HTTP/1.1\r\n" : "HTTP/1.1 200 OK\r\n"
            let input = wire(start + "X-Long: " + String(repeating: "a", count: 300) + "\n\r\n")
            for pieceSize in [nil, 1, 7, 64] {
                let error = parseFailure(role, input, pieceSize: pieceSize, maxHeaderBytes: 200)
                #expect(error?.kind == .headersTooLarge, "\(role) in pieces of \(pieceSize ?? input.count)")
            }
        }
    }
}
