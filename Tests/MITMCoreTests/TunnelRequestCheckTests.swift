import Testing

@testable import MITMCore

/// A request goes where its tunnel goes: one that names another place is refused, never forwarded
/// to the tunnel's host under another name.
@Suite struct TunnelRequestCheckTests {
    private func head(
        _ target: String, _ version: HTTPVersion = .http1_1, method: String = "GET", host: [String] = ["d.test"]
    ) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        for value in host { headers.add(name: "Host", value: value) }
        return HTTPRequestHead(method: method, target: target, version: version, headers: headers)
    }

    private func check(_ head: HTTPRequestHead, authority: String? = nil) -> TunnelRequestCheck.Refusal? {
        TunnelRequestCheck.check(head, authority: authority, tunnelHost: "d.test", port: 9441)
    }

    @Test func requestsForTheTunnelsHostGoThrough() {
        #expect(check(head("/x")) == nil)
        #expect(check(head("https://d.test/x")) == nil)
        #expect(check(head("https://D.TEST.:9441/x")) == nil)
        #expect(check(head("/x", .http1_0, host: [])) == nil, "HTTP/1.0 needs no Host")
        #expect(check(head("/x", .http2, host: []), authority: "d.test:9441") == nil)
        #expect(check(head("/x", .http2, host: ["d.test"]), authority: "d.test") == nil)
        #expect(
            check(head("/chat", .http2, method: "CONNECT", host: []), authority: "d.test") == nil,
            "an extended CONNECT (WebSocket over h2)")
    }

    @Test func aRequestForAnotherPlaceIsMisdirected() {
        #expect(check(head("https://evil.test/x"))?.status == 421)
        #expect(check(head("https://d.test:8443/x"))?.status == 421)
        #expect(
            check(head("/x", .http2, host: []), authority: "evil.test")?.status == 421,
            "HTTP/2 coalescing: the client retries")
        for authority in ["d.test.evil.test", "d.testx", "d.test:9442", "d.test:94410", "d.test:", "d.test:9441:1"] {
            #expect(
                check(head("/x", .http2, host: []), authority: authority)?.status ?? 0 >= 400,
                "\(authority): begins with the tunnel's name")
        }
        #expect(
            check(head("/x", .http2, host: []), authority: "evil.test")?.reason.contains(
                "not for the tunnel to d.test:9441") == true)
    }

    @Test func malformedRequestsAre400() {
        #expect(check(head("/x", host: []))?.reason == "an HTTP/1.1 request without Host")
        #expect(check(head("/x", host: ["d.test", "evil.test"]))?.status == 400)
        #expect(
            check(head("evil.test:443", method: "CONNECT", host: ["evil.test:443"]))?.reason.contains(
                "CONNECT inside the tunnel") == true)
        #expect(
            check(head("evil.test:443", .http2, method: "CONNECT", host: []), authority: "evil.test:443")?.status == 400
        )
        #expect(check(head("/x", .http2, host: []), authority: "user@d.test")?.reason.contains("userinfo") == true)
        #expect(
            check(head("/x", .http2, host: ["evil.test"]), authority: "d.test")?.reason.contains(
                "differs from the :authority") == true)
    }
}
