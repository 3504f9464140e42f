import MITMCore
import MITMRules
import Testing

@_spi(Testing) @testable import MITMProxy

/// The engine's timing decisions on a clock the test moves, with no socket and no real wait: the silence window and
/// the spare-connection desk decide at their deadlines, a rule delay releases its request, the pool drops an idle
/// upstream, and a throttled link lets bytes through as time passes — each one instant early and at its time.
@Suite struct TimingLifeTests {
    private static func interception(_ configure: @escaping (inout ProxyConfiguration) -> Void = { _ in }) throws
        -> ConnectionPlaybook
    {
        try ConnectionPlaybook(origins: ["api.test:443"], tlsOrigin: try MemoryTLSPeer.origin(host: "api.test")) {
            configuration in
            configuration.upstreamInsecure = true
            configuration.silenceWindow = .seconds(3)
            configure(&configuration)
        }
    }

    private func verdicts(_ play: ConnectionPlaybook) -> [Verdict] {
        play.events.compactMap { if case .verdict(let record) = $0 { record.verdict } else { nil } }
    }

    /// What the origin received since the last call ("" before the proxy connected to it).
    private func originReceived(_ play: ConnectionPlaybook) -> String {
        guard let origin = play.origin(0) else { return "" }
        return play.run { origin.takeText() }
    }

    @Test func theSilenceWindowDecidesAtItsBoundary() throws {
        let play = try Self.interception()
        let client = try play.trustingClient(host: "api.test")
        #expect(play.run { client.isHandshakeComplete })
        play.advance(by: .milliseconds(2_999))
        #expect(verdicts(play).isEmpty, "decided before the silence window ended")
        play.advance(by: .milliseconds(1))
        #expect(verdicts(play).map(\.kind) == [.inconclusive])
        #expect(verdicts(play).first?.reason == .idle)
    }

    @Test func aCloseWithoutARequestIsARefusalOnceTheDeskStopsWaitingForASibling() throws {
        let play = try Self.interception()
        let client = try play.trustingClient(host: "api.test")
        #expect(play.run { client.isHandshakeComplete })
        play.run { client.stream.close() }
        #expect(play.isClosed)
        // The desk rules one silence window after the close, and a margin of 5 ms for its arithmetic in seconds.
        play.advance(by: .milliseconds(3_004))
        #expect(verdicts(play).isEmpty, "ruled before a sibling could have spoken")
        play.advance(by: .milliseconds(1))
        #expect(verdicts(play).map(\.reason) == [.closedAfterHandshake])
        #expect(verdicts(play).first?.kind == .refused)
    }

    @Test func aRuleDelayHoldsTheRequestUntilTheClockPassesIt() throws {
        let play = try ConnectionPlaybook(
            origins: ["origin.test:80"], configure: { $0.rules = [try! RuleFlags.delay("origin.test=1500ms")] })
        play.clientSends("GET http://origin.test/slow HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        play.advance(by: .milliseconds(1_499))
        #expect(originReceived(play) == "")
        play.advance(by: .milliseconds(1))
        #expect(originReceived(play) == "GET /slow HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    }

    @Test func aRuleDelayHoldsAnAnswerAnotherRuleMakes() throws {
        let play = try ConnectionPlaybook(
            origins: ["origin.test:80"],
            configure: {
                $0.rules = [try! RuleFlags.respond("origin.test/down=503"), try! RuleFlags.delay("origin.test=1500ms")]
            })
        play.clientSends("GET http://origin.test/down HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        play.advance(by: .milliseconds(1_499))
        #expect(play.clientReceived() == "")
        play.advance(by: .milliseconds(1))
        #expect(play.clientReceived().hasPrefix("HTTP/1.1 503 "))
        #expect(originReceived(play) == "", "an answered request never reaches its origin")
    }

    @Test func thePoolClosesAnIdleUpstreamWhenTheClockPassesItsIdleTime() throws {
        let play = try Self.interception {
            $0.upstreamParkDelay = .seconds(0)
            $0.upstreamPoolIdle = .seconds(15)
        }
        let client = try play.trustingClient(host: "api.test")
        play.run { client.send("GET /v1 HTTP/1.1\r\nHost: api.test\r\n\r\n") }
        let origin = try #require(play.dialer.tlsConnections.first)
        #expect(play.run { origin.takeText() } == "GET /v1 HTTP/1.1\r\nHost: api.test\r\n\r\n")
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes") }
        #expect(play.run { client.takeText() } == "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes")
        // The response's end parked the upstream in the loop's pool.
        let pool = play.context.pool(for: play.network.loop)
        play.advance(by: .milliseconds(14_999))
        #expect(play.run { pool.expiredCount } == 0)
        #expect(!play.run { origin.ended }, "closed before its idle time")
        play.advance(by: .milliseconds(1))
        #expect(play.run { pool.expiredCount } == 1)
        #expect(play.run { origin.ended })
        #expect(!play.isClosed, "the client stays; its next request gets a new upstream")
    }

    @Test func aThrottledResponseArrivesAfterHalfTheRoundTrip() throws {
        let play = try ConnectionPlaybook(
            origins: ["origin.test:80"], configure: { $0.rules = [try! RuleFlags.throttle("origin.test=latency=1s")] })
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        #expect(play.run { origin.takeText() } == "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        play.advance(by: .milliseconds(499))
        #expect(play.clientReceived() == "")
        play.advance(by: .milliseconds(1))
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    }

    @Test func aThrottledLinkReleasesBytesAsTheClockAdvances() throws {
        // 80 kbit/s: 10,000 bytes a second once the bucket's burst is spent.
        let play = try ConnectionPlaybook(
            origins: ["origin.test:80"], configure: { $0.rules = [try! RuleFlags.throttle("origin.test=down=80kbit")] })
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n"
        play.run { origin.send(head + String(repeating: "x", count: 40_000)) }
        var received = play.clientReceived().utf8.count
        var arrivals = [received]
        for _ in 0..<5 {
            play.advance(by: .seconds(1))
            received += play.clientReceived().utf8.count
            arrivals.append(received)
        }
        let total = head.utf8.count + 40_000
        #expect(arrivals[0] < 10_000, "the first moment lets only the burst through: \(arrivals)")
        for second in 1..<4 {
            let gained = arrivals[second] - arrivals[second - 1]
            #expect((8_000...12_000).contains(gained), "second \(second) let through \(gained) bytes: \(arrivals)")
        }
        #expect(arrivals.last == total, "everything arrives: \(arrivals)")
    }
}
