import Foundation
import MITMCore
import MITMHTTP2
import Testing

@testable import MITMProxy

/// Stream-level behaviour through the proxy, driven by h2_client.py where curl cannot reach.
@Suite(.tags(.live), .skippedInFastTier, .serialized) struct HTTP2StreamTests {
    @Test func theConnectionPrefaceAloneCountsAsApplicationData() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("preface-only")
        #expect(json["closed"].bool == true, "\(result)")
        let verdict = try #require(await harness.proxy.waitForVerdict(host: "origin.test"))
        #expect(verdict.verdict == .intercepted)
        #expect(harness.proxy.connectionVerdicts.last?.verdict.reason == .applicationData)
        #expect(harness.events.exchanges.isEmpty)
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }

    @Test func manyConcurrentStreamsPastTheUpstreamsLimit() async throws {
        let harness = try await HTTP2Harness.start(.h2(maxConcurrentStreams: 4))
        let (json, result) = try await harness.h2Client("concurrent", ["60", "100000"])
        #expect(json["ok"].int == 60, "\(result)")
        #expect(json["resets"].array.isEmpty)
        #expect(harness.events.exchanges.count == 60)
        #expect(harness.events.tunnelsOpened == 1)
        await harness.stop()
    }

    @Test func aStreamTheClientResetsDoesNotDisturbItsSiblings() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("reset")
        let siblings = json["siblings"].array
        #expect(siblings.count == 2, "\(result)")
        #expect(siblings.allSatisfy { $0["status"].int == 200 && $0["ended"].bool == true && $0["reset"].isNull })
        #expect(siblings[1]["length"].int == 100_000)
        let record = try #require(harness.events.exchange(endingWith: "/bytes/10485760"))
        #expect(record.failure == "the client reset the stream (CANCEL)")
        #expect(record.response?.status == 200)
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }

    @Test func anUpstreamResetReachesTheClientWithItsCode() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("upstream-reset", ["2"])
        #expect(json["reset"]["reset"].int == 2, "\(result)")
        #expect(json["reset"]["length"].int == 1000)
        #expect(json["sibling"]["status"].int == 200)
        #expect(json["sibling"]["ended"].bool == true)
        #expect(
            harness.events.exchange(endingWith: "/reset/2")?.failure == "the upstream reset the stream (INTERNAL_ERROR)"
        )
        await harness.stop()
    }

    @Test func aRefusedStreamStaysRefused() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("get", ["/refuse", "/hello"])
        #expect(json["streams"][0]["reset"].int == 7, "\(result)")
        #expect(json["streams"][1]["status"].int == 200)
        await harness.stop()
    }

    @Test func aSlowReaderHoldsTheUpstreamBackByFlowControl() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("slow-reader")
        #expect(json["wait_status"].int == 200, "\(result)")
        #expect(json["received"].int == 65_535)
        #expect(json["origin"]["stalled"].bool == true)
        // The origin stalls once the proxy's stream window toward it is full: the proxy holds at most
        // that window of a 64 MiB body, however slowly the client reads.
        let sent = try #require(json["origin"]["sent"].int)
        #expect(sent <= Int(HTTP2Relay.settings.streamWindow) + 65_535)
        await harness.stop()
    }

    @Test func requestTrailersAndBodyReachTheOrigin() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("upload-trailers", ["1000000"])
        #expect(json["status"].int == 200, "\(result)")
        #expect(json["answer"]["length"].int == 1_000_000)
        #expect(json["answer"]["sha256"].string == json["expected_sha256"].string)
        #expect(json["answer"]["trailers"]["x-checksum"].string == json["expected_sha256"].string)
        #expect(harness.events.exchange(endingWith: "/digest")?.requestBodyBytes == 1_000_000)
        await harness.stop()
    }

    @Test func headerFieldsArriveAsSentWithNeverIndexedKept() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("headers")
        let received = json["received"].array.map {
            [$0[0].string ?? "", $0[1].string ?? "", String($0[2].bool ?? false)]
        }
        let authority = "origin.test:\(harness.origin.port)"
        #expect(
            received == [
                [":method", "GET", "false"], [":scheme", "https", "false"], [":authority", authority, "false"],
                [":path", "/headers", "false"], ["x-first", "1", "false"],
                ["authorization", "Bearer secret-token", "true"], ["x-last", "2", "false"],
            ], "\(result)")
        await harness.stop()
    }

    @Test func interimResponsesAreRelayed() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("early-hints")
        #expect(json["streams"][0]["informational"].array.map(\.string) == ["103"], "\(result)")
        #expect(json["streams"][0]["status"].int == 200)
        await harness.stop()
    }

    @Test func aClientGoAwayEndsBothLegsGracefully() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("client-goaway")
        #expect(json["first"]["status"].int == 200, "\(result)")
        #expect(json["closed"].bool == true)
        #expect(await harness.connectionsClosed())
        #expect(harness.events.exchanges.count == 1)
        await harness.stop()
    }

    @Test func aStoppingProxySendsGoAway() async throws {
        let harness = try await HTTP2Harness.start()
        async let client = harness.h2Client("wait-for-goaway")
        let answered = await harness.events.first { event in
            if case .exchange(let record) = event { return record.url.hasSuffix("/hello") }
            return false
        }
        #expect(answered != nil)
        harness.proxy.stop()
        let (json, result) = try await client
        #expect(json["first"]["status"].int == 200, "\(result)")
        #expect(json["goaway"]["code"].int == 0)
        #expect(json["closed"].bool == true)
        await harness.stop()
    }

    @Test func anUpstreamGoAwayEndsTheClientConnectionGracefully() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("goaway")
        #expect(json["first"]["status"].int == 200, "\(result)")
        #expect(json["first"]["ended"].bool == true)
        #expect(json["goaway"]["code"].int == 0)
        #expect(json["goaway"]["last_stream_id"].int == 1)
        #expect(json["closed"].bool == true)
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }
}
