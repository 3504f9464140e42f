import Testing

@testable import MITMProxy

/// The HTTP/1 relay's message semantics without a socket: framing kept or rewritten, trailers, persistence,
/// pipelining, interim responses and bodiless answers, each checked byte for byte at both ends of a plain-HTTP relay.
@Suite struct HTTP1RelayLifeTests {
    private func relay() throws -> ConnectionPlaybook { try ConnectionPlaybook(origins: ["origin.test:80"]) }

    private func upstream(_ play: ConnectionPlaybook, _ index: Int = 0) throws -> MemoryPeer {
        try #require(play.origin(index), "the proxy opened upstream connection \(index)")
    }

    @Test func aChunkedUploadReachesTheOriginPieceByPieceWithItsFraming() throws {
        let play = try relay()
        play.clientSends(
            "POST http://origin.test/up HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
        )
        let origin = try upstream(play)
        #expect(
            play.run { origin.takeText() }
                == "POST /up HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            "the first chunk goes on before the body ends")
        play.clientSends("6\r\n world\r\n0\r\n\r\n")
        #expect(play.run { origin.takeText() } == "6\r\n world\r\n0\r\n\r\n")
        play.run { origin.send("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n") }
        #expect(play.clientReceived() == "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func aChunkedResponseKeepsItsTrailerForAClientThatAcceptsTrailers() throws {
        let play = try relay()
        play.clientSends("GET http://origin.test/t HTTP/1.1\r\nHost: origin.test\r\nTE: trailers\r\n\r\n")
        let origin = try upstream(play)
        #expect(play.run { origin.takeText() }.contains("\r\nTE: trailers\r\n"), "the client's TE: trailers goes on")
        play.run {
            origin.send(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"
                    + "5\r\nhello\r\n0\r\nX-Sum: 5\r\n\r\n")
        }
        #expect(
            play.clientReceived()
                == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 5\r\n\r\n"
        )
    }

    @Test func requestsOneAfterAnotherShareOneUpstreamConnection() throws {
        let play = try relay()
        let origin: MemoryPeer
        play.clientSends("GET http://origin.test/1 HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        origin = try upstream(play)
        for index in 1...3 {
            if index > 1 { play.clientSends("GET http://origin.test/\(index) HTTP/1.1\r\nHost: origin.test\r\n\r\n") }
            #expect(play.run { origin.takeText() } == "GET /\(index) HTTP/1.1\r\nHost: origin.test\r\n\r\n")
            play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n\(index)") }
            #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n\(index)")
        }
        #expect(play.origin(1) == nil, "no second upstream connection")
        #expect(play.events.filter { if case .exchange = $0 { true } else { false } }.count == 3)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderIncludingBodilessAnswers() throws {
        let play = try relay()
        play.clientSends(
            "HEAD http://origin.test/h HTTP/1.1\r\nHost: origin.test\r\n\r\n"
                + "GET http://origin.test/empty HTTP/1.1\r\nHost: origin.test\r\n\r\n"
                + "GET http://origin.test/same HTTP/1.1\r\nHost: origin.test\r\n\r\n"
                + "GET http://origin.test/last HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try upstream(play)
        var sent = play.run { origin.takeText() }
        #expect(sent.hasPrefix("HEAD /h HTTP/1.1\r\n"), "\(sent)")
        play.run {
            origin.send(
                "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + "HTTP/1.1 204 No Content\r\n\r\n"
                    + "HTTP/1.1 304 Not Modified\r\nETag: \"a\"\r\n\r\n")
        }
        sent += play.run { origin.takeText() }
        #expect(
            sent.components(separatedBy: "HTTP/1.1\r\n").dropLast().map { $0.components(separatedBy: "\r\n").last! }
                == ["HEAD /h ", "GET /empty ", "GET /same ", "GET /last "], "in the client's order: \(sent)")
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast") }
        #expect(
            play.clientReceived()
                == "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + "HTTP/1.1 204 No Content\r\n\r\n"
                + "HTTP/1.1 304 Not Modified\r\nETag: \"a\"\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast",
            "a HEAD's Content-Length, a 204 and a 304 carry no body; the next answer follows at once")
    }

    @Test func aCloseDelimitedResponseEndsTheClientsConnectionAfterItsLastByte() throws {
        let play = try relay()
        play.clientSends("GET http://origin.test/stream HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try upstream(play)
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst ") }
        let head = play.clientReceived()
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.hasSuffix("\r\n\r\nfirst "), "\(head)")
        #expect(!head.lowercased().contains("content-length"), "\(head)")
        #expect(!play.clientSawEnd, "the body streams while the origin sends it")
        play.run {
            origin.send("and last")
            origin.stream.shutdownWriteAfterFlush()
        }
        #expect(play.clientReceived() == "and last")
        #expect(play.clientSawEnd, "the end of the origin's connection is the end of the body, and of the client's")
    }

    @Test func expectContinueWaitsForTheOriginsInterimAnswer() throws {
        let play = try relay()
        play.clientSends(
            "PUT http://origin.test/big HTTP/1.1\r\nHost: origin.test\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"
        )
        let origin = try upstream(play)
        #expect(play.run { origin.takeText() }.hasSuffix("Expect: 100-continue\r\nContent-Length: 4\r\n\r\n"))
        #expect(play.clientReceived().isEmpty, "the proxy does not answer 100 Continue on the origin's behalf")
        play.run { origin.send("HTTP/1.1 100 Continue\r\n\r\n") }
        #expect(play.clientReceived() == "HTTP/1.1 100 Continue\r\n\r\n")
        play.clientSends("data")
        #expect(play.run { origin.takeText() } == "data")
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    }

    @Test func aHeadThatArrivesAByteAtATimeGoesOnWholeWithFieldsAsSent() throws {
        let play = try relay()
        let head =
            "GET http://origin.test/q?a=b%20c HTTP/1.1\r\nHost: origin.test\r\nX-First: 1\r\nx-second:  two words\r\n"
            + "Accept: a\r\nAccept: b\r\nProxy-Connection: keep-alive\r\nConnection: X-Hop\r\nX-Hop: gone\r\n\r\n"
        for character in head { play.clientSends(String(character)) }
        let origin = try upstream(play)
        #expect(
            play.run { origin.takeText() }
                == "GET /q?a=b%20c HTTP/1.1\r\nHost: origin.test\r\nX-First: 1\r\nx-second: two words\r\n"
                + "Accept: a\r\nAccept: b\r\n\r\n",
            "names' case, order and repeats kept; hop-by-hop fields and those Connection names removed")
    }

    @Test func aResponseBodyReachesTheClientAsItArrives() throws {
        let play = try relay()
        play.clientSends("GET http://origin.test/slow HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try upstream(play)
        _ = play.run { origin.takeText() }
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nfour") }
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nfour")
        play.run { origin.send("five ") }
        #expect(play.clientReceived() == "five ")
        play.run { origin.send("six") }
        #expect(play.clientReceived() == "six")
        play.clientSends("GET http://origin.test/next HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        #expect(
            play.run { origin.takeText() }.hasPrefix("GET /next HTTP/1.1\r\n"), "the exchange ended with its length")
    }

    @Test func anOriginThatClosesMidBodyEndsTheClientsConnectionWithoutACompleteResponse() throws {
        let play = try relay()
        play.clientSends("GET http://origin.test/cut HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try upstream(play)
        play.run {
            origin.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
            origin.stream.shutdownWriteAfterFlush()
        }
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        #expect(play.clientSawEnd, "the client sees the response cut short rather than waiting for 93 more bytes")
    }
}
