import Foundation
import MITMHTTP2
import Testing

/// HTTP/2 floods end the flooding session, not the proxy: the other clients keep being served.
@Suite(.serialized) struct HTTP2FloodTests {
    /// CVE-2023-44487: streams opened and reset as fast as a client can write them.
    @Test func rapidResetEndsThatSessionWhileAnotherClientIsServed() async throws {
        let harness = try await HTTP2Harness.start()
        async let flood = harness.h2Client("rapid-reset", ["10000"])
        let (sibling, siblingResult) = try await harness.h2Client("get", ["/hello"])
        let (json, result) = try await flood
        #expect(sibling["streams"][0]["status"].int == 200, "\(siblingResult)")
        #expect(json["closed"].bool == true, "\(result)")
        // nghttp2's stream-reset rate limit (its CVE-2023-44487 fix) ends the session with INTERNAL_ERROR.
        #expect(json["goaway"]["code"].int == Int(HTTP2ErrorCode.internalError.rawValue), "\(result)")
        let (after, afterResult) = try await harness.h2Client("get", ["/hello"])
        #expect(after["streams"][0]["status"].int == 200, "\(afterResult)")
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }
}
