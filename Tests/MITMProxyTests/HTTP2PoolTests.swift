import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// Upstream HTTP/2 connections are pooled per loop: later client connections to the same origin, asking the
/// same way, open their streams on a connection an earlier client opened, within its concurrency limit, and
/// never on one that said GOAWAY.
@Suite(.tags(.live), .skippedInFastTier) struct HTTP2PoolTests {
    private func start(maxConcurrentStreams: Int = 100) async throws -> HTTP2Harness {
        // A pooled connection outlives a slow step of a loaded test run.
        try await HTTP2Harness.start(.h2(maxConcurrentStreams: maxConcurrentStreams)) {
            $0.loopCount = 1
            $0.upstreamPoolIdle = .seconds(120)
            $0.idleTimeout = .seconds(120)
        }
    }

    /// Which origin connection served `path` (GET over curl --http2 through the proxy), and how many it accepted.
    private func connection(_ harness: HTTP2Harness, _ path: String = "/connection", host: String = "origin.test")
        async throws -> (Int, Int)
    {
        let result = try await harness.curl(["--http2", harness.url(path, host: host)])
        try #require(result.succeeded, "\(result)")
        let json = JSON(parsing: result.stdoutText)
        return (try #require(json["connection"].int), try #require(json["accepted"].int))
    }

    @Test func twoClientsOneAfterTheOtherUseOneUpstreamConnection() async throws {
        let harness = try await start()
        let (first, _) = try await connection(harness)
        #expect(await harness.connectionsClosed(), "the first client connection ended")
        let (second, accepted) = try await connection(harness)
        #expect(second == first)
        #expect(accepted == 1, "the origin accepted one connection for both clients")
        #expect(harness.events.tunnelsOpened == 2)
        let records = harness.events.exchanges
        try #require(records.count == 2)
        #expect(
            records[0].timings.connect >= 0 && records[0].timings.ssl >= 0, "the first opened the upstream connection")
        #expect(records[1].timings.connect == -1 && records[1].timings.ssl == -1, "the second reused it")
        #expect(records[1].serverAddress == "127.0.0.1")
        #expect(harness.proxy.connectionVerdicts.map(\.verdict.kind) == [.intercepted, .intercepted])
        await harness.stop()
    }

    /// The warm-up leaves a pooled connection whose SETTINGS (its stream limit) are known; a slow origin's late
    /// SETTINGS would otherwise decide whether the next clients can share it.
    private func warmedUp(maxConcurrentStreams: Int = 100) async throws -> (HTTP2Harness, first: Int) {
        let harness = try await start(maxConcurrentStreams: maxConcurrentStreams)
        let (first, _) = try await connection(harness)
        #expect(await harness.connectionsClosed())
        return (harness, first)
    }

    /// A `/hold` path that marks a new file when the origin has the request, and a wait for that mark: only then is the
    /// held stream open on the upstream connection (the proxy's own record of the request comes before it is).
    private func markedHold(_ until: String) -> (path: String, reached: () async -> Bool) {
        let mark = TemporaryDirectory.path("hold-mark")
        return (
            "/hold?ms=25000&until=\(until)&mark=\(mark)",
            {
                let reached = await Poll.until(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: mark) }
                try? FileManager.default.removeItem(atPath: mark)
                return reached
            }
        )
    }

    @Test func aBusyConnectionIsSharedWhileItHasRoom() async throws {
        let (harness, first) = try await warmedUp()
        // Held until this connection has its third request (the warm-up's, this one, the other client's): answered
        // at once only if the two clients' streams shared it.
        let (path, reached) = markedHold("streams:3")
        async let held = connection(harness, path)
        #expect(await reached(), "the held request reached the origin")
        let (other, _) = try await connection(harness)
        let (holding, accepted) = try await held
        #expect(holding == first && other == first, "both clients' streams went over the pooled connection at once")
        #expect(accepted == 1)
        await harness.stop()
    }

    @Test func aConnectionAtItsConcurrencyLimitIsNotShared() async throws {
        let (harness, first) = try await warmedUp(maxConcurrentStreams: 1)
        // Held until the origin accepts a second connection, so the only stream slot stays taken however slowly the
        // second curl starts; a second client queued behind it instead would wait out the 25 s.
        let (path, reached) = markedHold("accepted:2")
        async let held = connection(harness, path)
        #expect(await reached(), "the held request reached the origin")
        let (other, _) = try await connection(harness)
        let (holding, accepted) = try await held
        #expect(holding == first)
        #expect(other != holding, "the origin allows one stream per connection: the second client needed its own")
        #expect(accepted == 2)
        await harness.stop()
    }

    @Test func aConnectionThatSaidGoAwayIsNotReused() async throws {
        let harness = try await start()
        let result = try await harness.curl(
            ["--http2", harness.url("/connection"), "--next"] + harness.curlProxyOptions
                + ["--http2", harness.url("/goaway")])
        #expect(result.succeeded, "\(result)")
        let first = try #require(
            JSON(parsing: String(result.stdoutText.dropLast(3)))["connection"].int, "\(result.stdoutText)")
        #expect(await harness.connectionsClosed())
        let (second, accepted) = try await connection(harness)
        #expect(second != first)
        #expect(accepted == 2)
        await harness.stop()
    }

    @Test func aClientAskingForAnotherNameGetsItsOwnUpstreamConnection() async throws {
        let harness = try await start()
        let (first, _) = try await connection(harness, host: "origin.test")
        #expect(await harness.connectionsClosed())
        let (second, accepted) = try await connection(harness, host: "pinned.test")
        #expect(second != first, "another SNI: the pooled connection is not interchangeable")
        #expect(accepted == 2)
        await harness.stop()
    }

    @Test func anHTTP1ClientDoesNotTakeThePooledHTTP2Connection() async throws {
        let harness = try await start()
        let (first, _) = try await connection(harness)
        #expect(await harness.connectionsClosed())
        let result = try await harness.curl(["--http1.1", harness.url("/connection")])
        // The origin speaks only h2, so an HTTP/1.1-only client fails there; what matters is that the proxy asked
        // the origin on a new connection instead of handing the client a stream on the shared one.
        #expect(!result.stdoutText.contains("\"connection\": \(first)"), "\(result)")
        let (third, accepted) = try await connection(harness)
        #expect(third == first, "the pooled connection is still there for h2 clients")
        #expect(accepted == 2)
        await harness.stop()
    }
}
