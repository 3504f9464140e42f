import Testing

@testable import MITMCore

/// What the proxy removes and says again before forwarding a message (RFC 9110 §7.6.1).
@Suite struct HopByHopFieldsTests {
    private func forwarded(_ headers: HTTPHeaders, status: Int = 200) -> [String] {
        HopByHopFields.forwarding(HTTPResponseHead(status: status, reason: "OK", headers: headers)).headers.fields.map {
            "\($0.name): \($0.value)"
        }
    }

    @Test func aMessageWithoutHopByHopFieldsIsUntouched() {
        #expect(
            forwarded(["Content-Type": "text/plain", "Content-Length": "3"]) == [
                "Content-Type: text/plain", "Content-Length: 3",
            ])
    }

    @Test func persistenceIsSaidAgainForTheNextHop() {
        #expect(
            forwarded(["Connection": "Keep-Alive", "Content-Length": "3"]) == [
                "Content-Length: 3", "Connection: keep-alive",
            ])
        #expect(
            forwarded(["Connection": "keep-alive, CLOSE", "Content-Length": "3"]) == [
                "Content-Length: 3", "Connection: close",
            ])
        #expect(forwarded(["Connection": " , ", "Content-Length": "3"]) == ["Content-Length: 3"])
        // Written as it would be said again: stays in place.
        #expect(
            forwarded(["Connection": "keep-alive", "Content-Length": "3"]) == [
                "Connection: keep-alive", "Content-Length: 3",
            ])
        #expect(
            forwarded(["Connection": "close", "Content-Length": "3"]) == ["Connection: close", "Content-Length: 3"])
    }

    @Test func aClientsCloseIsNotSaidToTheOriginWhoseConnectionIsKept() {
        func upstream(_ version: HTTPVersion, _ headers: HTTPHeaders) -> [String] {
            var head = HopByHopFields.forwarding(
                HTTPRequestHead(method: "GET", target: "/", version: version, headers: headers),
                authority: nil, upgrading: false)
            HopByHopFields.keepingUpstreamOpen(&head)
            return head.headers.fields.map { "\($0.name): \($0.value)" }
        }
        #expect(
            upstream(.http1_1, ["Host": "a.test", "Connection": "close, X-Trace", "X-Trace": "1"]) == ["Host: a.test"])
        #expect(upstream(.http1_1, ["Host": "a.test", "Connection": "close"]) == ["Host: a.test"])
        #expect(upstream(.http1_0, ["Host": "a.test"]) == ["Host: a.test", "Connection: keep-alive"])
        #expect(
            upstream(.http1_0, ["Host": "a.test", "Connection": "close"]) == ["Host: a.test", "Connection: keep-alive"])
    }

    @Test func fieldsNamedByConnectionGoButFramingAndHostStay() {
        let headers: HTTPHeaders = [
            "Connection": "X-Trace, content-length, keep-alive", "X-Trace": "1", "Keep-Alive": "timeout=5",
            "Content-Length": "3", "Proxy-Connection": "keep-alive",
        ]
        #expect(forwarded(headers) == ["Content-Length: 3", "Connection: keep-alive"])
    }

    @Test func anUpgradeKeepsItsUpgradeField() {
        let headers: HTTPHeaders = ["Connection": "Upgrade", "Upgrade": "websocket"]
        #expect(forwarded(headers, status: 101) == ["Upgrade: websocket", "Connection: Upgrade"])
        #expect(forwarded(headers) == [])
    }

    @Test func teTrailersIsKeptAndOtherCodingsAreNot() {
        var request = HTTPRequestHead(
            method: "GET", target: "/", headers: ["TE": "trailers, deflate", "Connection": "TE"])
        request = HopByHopFields.forwarding(request, authority: nil, upgrading: false)
        #expect(request.headers.fields.map { "\($0.name): \($0.value)" } == ["TE: trailers"])
    }

    @Test func repeatedEqualContentLengthsAreWrittenOnce() {
        #expect(forwarded(["Content-Length": "3, 3", "Content-Length": "3"]) == ["Content-Length: 3"])
    }

    @Test func tokenLookupsIgnoreCaseAndSpaces() {
        let headers: HTTPHeaders = ["connection": " Keep-Alive ,Upgrade", "Transfer-Encoding": "gzip, Chunked"]
        #expect(headers.containsToken("upgrade", in: "Connection"))
        #expect(headers.containsToken("keep-alive", in: "CONNECTION"))
        #expect(!headers.containsToken("close", in: "connection"))
        #expect(!headers.containsToken("upgrade", in: "transfer-encoding"))
        #expect(headers.tokens("transfer-encoding") == ["gzip", "chunked"])
    }
}
