import Foundation
import MITMCore
import MITMHTTP2
import Testing

@testable import MITMProxy

@Suite struct HTTP2HeadsTests {
    @Test func pseudoHeadersBecomeMethodTargetAndHost() {
        let head = HTTP2Heads.request([
            HTTP2HeaderField(":method", "POST"), HTTP2HeaderField(":scheme", "https"),
            HTTP2HeaderField(":authority", "api.example.com"), HTTP2HeaderField(":path", "/v1/items?x=1"),
            HTTP2HeaderField("content-type", "application/json"), HTTP2HeaderField("cookie", "a=1"),
            HTTP2HeaderField("cookie", "b=2"),
        ])
        #expect(head.method == "POST")
        #expect(head.target == "/v1/items?x=1")
        #expect(head.version == .http2)
        #expect(head.headers.fields.map(\.name) == ["host", "content-type", "cookie", "cookie"])
        #expect(head.headers.first("host") == "api.example.com")
        #expect(head.headers.values("cookie") == ["a=1", "b=2"])
    }

    @Test func aRequestHeadHasRoomForItsFieldsOnly() {
        // The flow list keeps a record's fields as they are when they hold no more than two spare places.
        let head = HTTP2Heads.request([
            HTTP2HeaderField(":method", "GET"), HTTP2HeaderField(":scheme", "https"),
            HTTP2HeaderField(":authority", "api.example.com"), HTTP2HeaderField(":path", "/"),
            HTTP2HeaderField(":protocol", "websocket"), HTTP2HeaderField("accept", "*/*"),
        ])
        #expect(head.headers.fields.map(\.name) == ["host", "accept"])
        #expect(head.headers.fields.capacity - head.headers.count <= 2)
    }

    @Test func anExtendedConnectKeepsItsPathWhereAPlainConnectNamesAnAuthority() {
        let webSocket: [HTTP2HeaderField] = [
            HTTP2HeaderField(":method", "CONNECT"), HTTP2HeaderField(":protocol", "websocket"),
            HTTP2HeaderField(":scheme", "https"),
            HTTP2HeaderField(":authority", "chat.example:443"), HTTP2HeaderField(":path", "/socket?room=1"),
        ]
        #expect(HTTP2Heads.request(webSocket).target == "/socket?room=1")
        #expect(HTTP2Heads.extendedConnectProtocol(webSocket) == "websocket")
        let tunnel: [HTTP2HeaderField] = [
            HTTP2HeaderField(":method", "CONNECT"), HTTP2HeaderField(":authority", "db.example:5432"),
        ]
        #expect(HTTP2Heads.request(tunnel).target == "db.example:5432")
        #expect(HTTP2Heads.extendedConnectProtocol(tunnel) == nil)
        #expect(
            HTTP2Heads.extendedConnectProtocol([
                HTTP2HeaderField(":method", "GET"), HTTP2HeaderField(":protocol", "websocket"),
            ]) == nil)
    }

    @Test func anExplicitHostFieldWinsOverTheAuthority() {
        let head = HTTP2Heads.request([
            HTTP2HeaderField(":method", "GET"), HTTP2HeaderField(":scheme", "https"),
            HTTP2HeaderField(":authority", "a.example"), HTTP2HeaderField(":path", "/"),
            HTTP2HeaderField("host", "b.example"),
        ])
        #expect(head.headers.values("host") == ["b.example"])
    }

    @Test func connectTargetsTheAuthority() {
        let head = HTTP2Heads.request([
            HTTP2HeaderField(":method", "CONNECT"), HTTP2HeaderField(":authority", "db.internal:5432"),
        ])
        #expect(head.method == "CONNECT")
        #expect(head.target == "db.internal:5432")
    }

    @Test func responseStatusComesFromThePseudoHeader() {
        let head = HTTP2Heads.response([HTTP2HeaderField(":status", "404"), HTTP2HeaderField("content-length", "0")])
        #expect(head.status == 404)
        #expect(head.reason == "")
        #expect(head.version == .http2)
        #expect(head.headers.fields == [HTTPHeaderField(name: "content-length", value: "0")])
    }

    @Test func localResponsesBecomeLowercaseFieldsWithoutConnectionOptions() {
        let head = LocalResponse.badGateway(host: "a.test", port: 443, reason: "refused").head(keepAlive: false)
        let fields = HTTP2Heads.fields(head)
        #expect(fields.first == HTTP2HeaderField(":status", "502"))
        #expect(fields.allSatisfy { $0.name == Array($0.nameText.lowercased().utf8) })
        #expect(!fields.contains { $0.nameText == "connection" })
        #expect(fields.value(of: "content-type") == "text/plain; charset=utf-8")
    }

    @Test func anHTTP2ExchangeIsHTTP2InTheEventLine() throws {
        let now = Date(timeIntervalSince1970: 0)
        var record = ExchangeRecord(
            connectionID: 1, scheme: "https", host: "a.test", port: 443,
            request: HTTPRequestHead(method: "GET", target: "/", version: .http2),
            response: HTTPResponseHead(version: .http2, status: 200, reason: ""),
            started: now, finished: now)
        record.httpVersion = "HTTP/2.0"
        let line = EventLine(.exchange(record), time: now).json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["httpVersion"] as? String == "HTTP/2.0")
    }
}

@Suite struct ALPNPolicyTests {
    @Test func theUpstreamIsOfferedWhatTheClientOfferedThatCanBeRelayed() {
        #expect(ALPNPolicy.upstreamOffer(clientOffered: ["h2", "http/1.1"]) == ["h2", "http/1.1"])
        #expect(ALPNPolicy.upstreamOffer(clientOffered: ["http/1.1", "h2"]) == ["http/1.1", "h2"])
        #expect(ALPNPolicy.upstreamOffer(clientOffered: ["grpc-exp", "h2", "h2"]) == ["h2"])
        #expect(ALPNPolicy.upstreamOffer(clientOffered: ["spdy/3.1"]).isEmpty)
        #expect(ALPNPolicy.upstreamOffer(clientOffered: []).isEmpty)
    }

    @Test func theClientIsOfferedExactlyWhatTheUpstreamChose() {
        #expect(ALPNPolicy.clientOffer(upstreamChose: "h2") == ["h2"])
        #expect(ALPNPolicy.clientOffer(upstreamChose: "http/1.1") == ["http/1.1"])
        #expect(ALPNPolicy.clientOffer(upstreamChose: nil).isEmpty)
    }

    @Test func withoutAnUpstreamTheClientKeepsItsOwnPreference() {
        #expect(ALPNPolicy.clientOfferWithoutUpstream(clientOffered: ["h2", "http/1.1"]) == ["h2", "http/1.1"])
        #expect(ALPNPolicy.clientOfferWithoutUpstream(clientOffered: ["http/1.1"]) == ["http/1.1"])
    }
}
