import Foundation
import MITMCore
import MITMHTTP2
import MITMProxy
import Testing

/// A peer that breaks HTTP/2 gets the proper error code, a log line names what it did, and the
/// connection ends without leaking anything.
@Suite(.tags(.live), .skippedInFastTier, .serialized) struct HTTP2BadInputTests {
    @Test func requestHeadersOverTheLimitGet431() async throws {
        let harness = try await HTTP2Harness.start()
        // A loaded machine may take a while to send and relay 70 KiB of header; what is asserted is the answer.
        let (json, result) = try await harness.h2Client("big-request-headers", timeout: .seconds(90))
        #expect(json["big"]["status"].int == 431, "\(result)")
        #expect(json["sibling"]["status"].int == 200)
        let record = try #require(harness.events.exchanges.first { $0.response?.status == 431 })
        #expect(record.failure == "the request's header section is larger than 64 KiB")
        #expect(record.request.target == "/hello")
        await harness.stop()
    }

    @Test func requestTrailersOverTheLimitGet431() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("big-request-trailers")
        #expect(json["big"]["status"].int == 431, "\(result)")
        #expect(json["sibling"]["status"].int == 200)
        #expect(
            harness.events.exchange(endingWith: "/digest")?.failure
                == "the request's trailer section is larger than 64 KiB")
        await harness.stop()
    }

    @Test func responseHeadersOverTheLimitGet502() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("get", ["/big-headers", "/hello"])
        #expect(json["streams"][0]["status"].int == 502, "\(result)")
        #expect(json["streams"][1]["status"].int == 200)
        #expect(
            harness.events.exchange(endingWith: "/big-headers")?.failure
                == "the upstream's header section is larger than 64 KiB")
        await harness.stop()
    }

    @Test func aHeaderFieldTooBigToDecodeEndsTheUpstreamWithCompressionError() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("get", ["/huge-field", "/hello"])
        #expect(json["streams"][0]["status"].int == 502, "\(result)")
        #expect(json["streams"][1]["status"].int == 502)
        #expect(harness.events.upstreamFailures.contains { $0.contains("sent GOAWAY COMPRESSION_ERROR") })
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }

    @Test func overrunningAStreamWindowResetsOnlyThatStream() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("flow-violation")
        #expect(json["violator"]["reset"].int == Int(HTTP2ErrorCode.flowControlError.rawValue), "\(result)")
        #expect(json["sibling"]["status"].int == 200)
        #expect(json["goaway"].isNull)
        #expect(
            harness.events.badRequests.contains {
                $0.contains("FLOW_CONTROL_ERROR") && $0.contains("flow-control window")
            })
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }

    @Test func dataOnStreamZeroGetsGoAwayProtocolError() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("stream-zero-data")
        #expect(json["goaway"]["code"].int == 1, "\(result)")
        #expect(json["closed"].bool == true)
        #expect(harness.events.badRequests.contains { $0.contains("sent GOAWAY PROTOCOL_ERROR") })
        #expect(await harness.connectionsClosed())
        // The origin was left cleanly: a new connection works.
        let (again, _) = try await harness.h2Client("get", ["/hello"])
        #expect(again["streams"][0]["status"].int == 200)
        await harness.stop()
    }

    @Test func aClientWithoutThePrefaceGetsGoAway() async throws {
        let harness = try await HTTP2Harness.start()
        let (json, result) = try await harness.h2Client("preface-missing")
        #expect(json["goaway_code"].int == 1, "\(result)")
        #expect(harness.events.badRequests.contains { $0.contains("did not send the HTTP/2 connection preface") })
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }
}
