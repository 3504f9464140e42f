import Testing

@testable import MITMCore

/// A head forwarded unchanged goes on as the bytes it arrived in; any change, by the proxy, a rule or the web UI,
/// has it written anew.
@Suite struct HTTP1ParsedHeadBytesTests {
    private let requestBytes = wire("GET /a HTTP/1.1\r\nHost: h.test\r\nX-Spaced:   kept as sent  \r\n\r\n")
    private let responseBytes = wire("HTTP/1.1 200 Fine\r\nContent-Length: 2\r\nX-Tab:\tv\r\n\r\n")

    private func requestHead(_ input: [UInt8], pieces: Int? = nil) throws -> HTTPRequestHead? {
        var parser = HTTP1Parser(role: .request)
        var events: [HTTP1Event] = []
        var start = 0
        while start < input.count {
            let end = min(start + (pieces ?? input.count), input.count)
            events += try parser.feed(input[start..<end])
            start = end
        }
        guard case .requestHead(let head, _)? = events.first else { return nil }
        return head
    }

    private func responseHead(_ input: [UInt8]) throws -> HTTPResponseHead? {
        var parser = HTTP1Parser(role: .response)
        parser.expectResponse(toMethod: "GET")
        guard case .responseHead(let head, _)? = try parser.feed(input).first else { return nil }
        return head
    }

    @Test func aHeadReadInOnePieceKeepsItsBytesWithoutTheBlankLinesBeforeIt() throws {
        let head = try #require(try requestHead(wire("\r\n") + requestBytes + wire("next")))
        #expect(head.parsedFrom == requestBytes)
        #expect(try responseHead(responseBytes + wire("ok"))?.parsedFrom == responseBytes)
    }

    @Test func aHeadSplitAcrossReadsIsWrittenAnew() throws {
        let head = try #require(try requestHead(requestBytes, pieces: 7))
        #expect(head.parsedFrom == nil)
        #expect(head.bytes(forwarding: head) == head.serialized())
    }

    @Test func anUnchangedHeadGoesOnAsItCame() throws {
        let request = try #require(try requestHead(requestBytes))
        let forwarded = HopByHopFields.forwarding(request, authority: nil, upgrading: false)
        #expect(forwarded.bytes(forwarding: request) == requestBytes)
        #expect(request.serialized() != requestBytes, "the serialization trims the spaces the bytes keep")
        let response = try #require(try responseHead(responseBytes))
        #expect(HopByHopFields.forwarding(response).bytes(forwarding: response) == responseBytes)
    }

    @Test func anyChangeHasTheHeadWrittenAnew() throws {
        let request = try #require(try requestHead(requestBytes))
        var changes: [(inout HTTPRequestHead) -> Void] = [
            { $0.method = "HEAD" }, { $0.target = "/b" }, { $0.version = .http1_0 },
            { $0.headers.add(name: "X-New", value: "1") }, { $0.headers.fields[0].value = "other.test" },
        ]
        changes.append { $0.headers.remove("x-spaced") }
        for change in changes {
            var changed = request
            change(&changed)
            #expect(changed.parsedFrom == nil)
            #expect(changed.bytes(forwarding: request) == changed.serialized())
            #expect(changed.bytes(forwarding: changed) == changed.serialized())
        }
        let response = try #require(try responseHead(responseBytes))
        var closing = HopByHopFields.forwarding(response)
        closing.headers.replaceOrAdd(name: "Connection", value: "close")
        #expect(closing.bytes(forwarding: response) == closing.serialized())
        var edited = response
        edited.status = 404
        #expect(edited.parsedFrom == nil && edited.bytes(forwarding: edited) == edited.serialized())
        edited = response
        edited.reason = "Other"
        let rewritten = wire("HTTP/1.1 200 Other\r\nContent-Length: 2\r\nX-Tab: v\r\n\r\n")
        #expect(edited.bytes(forwarding: response) == rewritten)
    }

    @Test func theBytesDoNotCountInEquality() throws {
        let parsed = try #require(try requestHead(requestBytes))
        var built = HTTPRequestHead(method: "GET", target: "/a", headers: parsed.headers)
        #expect(built == parsed)
        built.headers.add(name: "X", value: "y")
        #expect(built != parsed)
    }
}
