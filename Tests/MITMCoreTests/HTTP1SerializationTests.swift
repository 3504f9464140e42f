import Testing

@testable import MITMCore

@Suite struct HTTP1SerializationTests {
    @Test func requestHeadIsWrittenInOrder() {
        let head = HTTPRequestHead(
            method: "POST", target: "/api?x=1",
            headers: ["Host": "api.example", "content-type": "application/json", "X-Dup": "1", "X-Dup": "2"])
        #expect(
            head.serialized()
                == wire(
                    "POST /api?x=1 HTTP/1.1\r\nHost: api.example\r\ncontent-type: application/json\r\nX-Dup: 1\r\nX-Dup: 2\r\n\r\n"
                ))
        #expect(
            HTTPRequestHead(method: "GET", target: "/", version: .http1_0).serialized()
                == wire("GET / HTTP/1.0\r\n\r\n"))
    }

    @Test func responseHeadIsWrittenInOrder() {
        let head = HTTPResponseHead(
            status: 404, reason: "Not Found", headers: ["Content-Length": "0", "Server": "mitm"])
        #expect(head.serialized() == wire("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nServer: mitm\r\n\r\n"))
        #expect(
            HTTPResponseHead(version: .http1_0, status: 204, reason: "").serialized() == wire("HTTP/1.0 204 \r\n\r\n"))
    }

    @Test func versionDescription() {
        #expect(HTTPVersion.http1_1.description == "HTTP/1.1")
        #expect(HTTPVersion.http1_0.description == "HTTP/1.0")
        #expect(HTTPVersion(major: 2, minor: 0).description == "HTTP/2.0")
    }

    @Test func parsedRequestHeadsSurviveARoundTrip() throws {
        let inputs = [
            "GET /a/b?c=d&e HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test/1.0\r\nAccept: */*\r\nX-Dup: 1\r\nx-dup: 2\r\n\r\n",
            "OPTIONS * HTTP/1.0\r\nX-Empty: \r\n\r\n",
            "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\n",
            "GET http://example.com/ HTTP/1.1\r\nX-Unicode: żółw\r\n\r\n",
        ]
        for input in inputs {
            guard case .requestHead(let head, _)? = try parseEvents(.request, wire(input)).first else {
                Issue.record("no head for \(input)")
                continue
            }
            #expect(head.serialized() == wire(input))
            #expect(head.serializedCount == wire(input).count)
            #expect(try parseEvents(.request, head.serialized()).first == .requestHead(head, framing: .none))
        }
    }

    @Test func serializedCountIsTheLengthOfTheWrittenHead() {
        let request = HTTPRequestHead(
            method: "POST", target: "/żółw?x=1", headers: ["Host": "api.example", "X-Unicode": "żółw 😀"])
        #expect(request.serializedCount == request.serialized().count)
        let response = HTTPResponseHead(version: .http1_0, status: 204, reason: "", headers: ["X-Unicode": "é"])
        #expect(response.serializedCount == response.serialized().count)
        #expect(HTTPResponseHead(status: 200, reason: "OK").serializedCount == "HTTP/1.1 200 OK\r\n\r\n".utf8.count)
    }

    @Test func parsedResponseHeadsSurviveARoundTrip() throws {
        let inputs = [
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n",
            "HTTP/1.1 304 \r\nETag: \"abc\"\r\n\r\n",
            "HTTP/1.0 500 Something  Odd\r\nContent-Length: 0\r\n\r\n",
        ]
        for input in inputs {
            guard case .responseHead(let head, _)? = try parseEvents(.response, wire(input)).first else {
                Issue.record("no head for \(input)")
                continue
            }
            #expect(head.serialized() == wire(input))
        }
    }

    @Test func forwardedChunkedMessageParsesToTheSameEvents() throws {
        let original = try parseEvents(
            .request,
            wire("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: v\r\n\r\n"))
        guard case .requestHead(let head, _) = original[0], case .body(let bodyBytes) = original[1],
            case .end(let trailers) = original[2]
        else {
            Issue.record("unexpected events \(original)")
            return
        }
        let forwarded =
            head.serialized() + HTTP1Chunked.encodeChunk(bodyBytes) + HTTP1Chunked.lastChunk(trailers: trailers)
        #expect(try parseEvents(.request, forwarded) == original)
    }
}
