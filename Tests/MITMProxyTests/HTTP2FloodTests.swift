import Foundation
import MITMHTTP2
import Testing

/// HTTP/2 floods end the flooding session, not the proxy: the other clients keep being served, and the real
/// binary's memory, CPU and descriptors stay bounded while it happens and come back after.
@Suite(.tags(.live), .skippedInFastTier, .serialized) struct HTTP2FloodTests {
    private static let enhanceYourCalm = Int(HTTP2ErrorCode.enhanceYourCalm.rawValue)
    /// Allowed growth of the proxy's peak RSS during one flood: buffers and nghttp2's bounded queues, far below
    /// what an unbounded queue of acknowledgements or header fields would take.
    private static let allowedGrowthKilobytes = 24 * 1024
    /// SETTINGS and PINGs move no stream, so they do not keep a connection from idling out: with the harness's 4 s, a
    /// sanitized proxy on a loaded machine is still answering the flood when the idle timeout ends it, before the
    /// flood detection the test is about.
    private static let floodIdleTimeout = ["--idle-timeout", "30"]

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

    /// CVE-2024-28182: a request head that never ends, one CONTINUATION frame after another.
    @Test func aContinuationFloodEndsThatSessionWithEnhanceYourCalm() async throws {
        let rig = try await HTTP2ProcessHarness.start()
        let (json, result, others) = try await rig.whileServingOthers("continuation-flood", ["100000"])
        #expect(json["goaway"]["code"].int == Self.enhanceYourCalm, "\(result)")
        // Ended at the ninth CONTINUATION: the client saw the GOAWAY long before its 100,000 were out.
        #expect((json["sent"].int ?? .max) < 100_000, "\(result)")
        #expect(await rig.proxy.printed("Too many CONTINUATION frames"), "\(rig.proxy.outputText)")
        try await expectBoundedAndRecovered(rig, others: others)
    }

    /// CVE-2019-9515: SETTINGS frames written without reading their acknowledgements.
    @Test func aSettingsFloodEndsThatSessionWithEnhanceYourCalm() async throws {
        let rig = try await HTTP2ProcessHarness.start(Self.floodIdleTimeout)
        let (json, result, others) = try await rig.whileServingOthers("settings-flood", ["1000000"])
        await expectEnhanceYourCalm(json, result, rig)
        // The proxy stopped answering once a thousand acknowledgements were owed (what it answered before fills the
        // sockets' buffers, some megabytes): fewer came back than were asked.
        // None at all when the flood came before the upstream's SETTINGS (the client's answers wait for those).
        #expect((json["frames"]["SETTINGS_ACK"].int ?? 0) < 1_000_000, "\(result)")
        #expect(await rig.proxy.printed("Flooding was detected"), "\(rig.proxy.outputText)")
        try await expectBoundedAndRecovered(rig, others: others)
    }

    /// CVE-2019-9512: PING frames written without reading their acknowledgements.
    @Test func aPingFloodEndsThatSessionWithEnhanceYourCalm() async throws {
        let rig = try await HTTP2ProcessHarness.start(Self.floodIdleTimeout)
        let (json, result, others) = try await rig.whileServingOthers("ping-flood", ["1000000"])
        await expectEnhanceYourCalm(json, result, rig)
        #expect((json["frames"]["PING_ACK"].int ?? 0) < 1_000_000, "\(result)")
        #expect(await rig.proxy.printed("Flooding was detected"), "\(rig.proxy.outputText)")
        try await expectBoundedAndRecovered(rig, others: others)
    }

    /// A header list past the 64 KiB limit costs that stream a 431; one too long for nine frames costs the session.
    @Test func aHugeHeaderListGets431AndAnEndlessOneEndsTheSession() async throws {
        let rig = try await HTTP2ProcessHarness.start()
        let (over, overResult, others) = try await rig.whileServingOthers("header-list", ["100"])
        #expect(over["big"]["status"].int == 431, "\(overResult)")
        #expect(over["sibling"]["status"].int == 200, "the same connection goes on: \(overResult)")
        #expect(over["goaway"].isNull, "\(overResult)")
        let (huge, hugeResult) = try await rig.h2Client("header-list", ["1024"])
        #expect(huge["goaway"]["code"].int == Self.enhanceYourCalm, "\(hugeResult)")
        #expect(huge["closed"].bool == true, "\(hugeResult)")
        try await expectBoundedAndRecovered(rig, others: others)
    }

    /// HPACK's amplification: 144 KiB of one-byte references to a 4 KiB table entry decode to about 565 MB of
    /// header list. The proxy keeps only what fits its limit and answers 431 without copying the rest.
    /// Header blocks move no stream, so the session runs with the flood tests' idle timeout: a loaded machine's
    /// slow decode must not end it by idleness first.
    @Test func anHPACKBombGets431WithoutCostingTheProxy() async throws {
        let rig = try await HTTP2ProcessHarness.start(Self.floodIdleTimeout)
        let cpuBefore = try rig.proxy.cpuSeconds()
        let (json, result, others) = try await rig.whileServingOthers("header-bomb", [])
        #expect(json["big"]["status"].int == 431, "\(result)")
        #expect(json["sibling"]["status"].int == 200, "\(result)")
        // Decoding 565 MB of references is nghttp2's work (well under a second); a copy of each field would add as much again.
        let cpu = try rig.proxy.cpuSeconds() - cpuBefore
        #expect(cpu < 5, "the proxy used \(cpu) s of CPU")
        try await expectBoundedAndRecovered(rig, others: others)
    }

    /// A client that holds its stream windows at zero while the origin has 64 MiB to send, and PINGs to look busy:
    /// the origin is stopped by flow control after one stream window, and the idle timeout ends the session with
    /// RST_STREAM(CANCEL) for the stream and a GOAWAY.
    @Test func aWindowHeldAtZeroIsEndedByTheIdleTimeoutDespitePings() async throws {
        let rig = try await HTTP2ProcessHarness.start(["--idle-timeout", "2"])
        let path = "/bytes/67108864"
        async let held = rig.whileServingOthers("zero-window", [path])
        let (stalled, stalledResult) = try await rig.h2Client("wait-stalled", [path])
        let (json, result, others) = try await held
        #expect(json["status"].int == 200, "\(result)")
        #expect(json["body"].int == 0, "\(result)")
        #expect((json["pings"].int ?? 0) >= 3, "the client kept the connection busy: \(result)")
        let seconds = json["seconds_after_head"].value as? Double ?? .infinity
        #expect(seconds >= 1.5 && seconds < 10, "ended \(seconds) s after the response head: \(result)")
        #expect(json["resets"]["1"].int == Int(HTTP2ErrorCode.cancel.rawValue), "\(result)")
        #expect(json["goaway"]["code"].int == Int(HTTP2ErrorCode.noError.rawValue), "\(result)")
        // What the origin could send is one upstream stream window (256 KiB), not the 64 MiB.
        #expect(stalled["origin"]["stalled"].bool == true, "\(stalledResult)")
        #expect((stalled["origin"]["sent"].int ?? .max) <= 256 * 1024, "\(stalledResult)")
        #expect(await rig.proxy.printed("(idle for 2 s)"), "\(rig.proxy.outputText)")
        try await expectBoundedAndRecovered(rig, others: others)
    }

    /// The flood's session ended with GOAWAY ENHANCE_YOUR_CALM. A client that never reads sees it only if it reads
    /// before the proxy's linger ends (2 s after the GOAWAY); one still writing its flood then (a slow, sanitized
    /// proxy takes longer to get there) meets a closed connection, and the proxy's log says what it sent.
    private func expectEnhanceYourCalm(_ json: JSON, _ result: SubprocessResult, _ rig: HTTP2ProcessHarness) async {
        #expect(await rig.proxy.printed("sent GOAWAY ENHANCE_YOUR_CALM"), "\(rig.proxy.outputText)")
        #expect(
            json["goaway"]["code"].int == Self.enhanceYourCalm
                || (json["goaway"].isNull && json["closed"].bool == true),
            "\(result)")
    }

    /// Every other client got its 200; the proxy's peak memory stayed within bounds; once the flood's connection is
    /// gone its descriptors are back to the baseline and it does not spin; a new client is served.
    private func expectBoundedAndRecovered(_ rig: HTTP2ProcessHarness, others: [Int?]) async throws {
        #expect(!others.isEmpty && others.allSatisfy { $0 == 200 }, "the other clients got \(others)")
        // Under AddressSanitizer (scripts/test --sanitize address sets ASAN_OPTIONS) the RSS is the sanitizer's: its
        // quarantine keeps up to 256 MiB of freed memory whatever the proxy does.
        if ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil {
            let growth = try rig.peakGrowthKilobytes()
            #expect(growth < Self.allowedGrowthKilobytes, "peak RSS grew by \(growth) kB")
        }
        let descriptors = await rig.descriptorsAfterSettling()
        #expect(
            descriptors == rig.descriptorBaseline, "descriptors: \(rig.descriptorBaseline) before, \(descriptors) after"
        )
        let idle = try await rig.idleCPUSeconds()
        #expect(idle < 0.2, "the idle proxy used \(idle) s of CPU in half a second")
        let (after, afterResult) = try await rig.h2Client("get", ["/hello"])
        #expect(after["streams"][0]["status"].int == 200, "\(afterResult)")
        await rig.stop()
    }
}
