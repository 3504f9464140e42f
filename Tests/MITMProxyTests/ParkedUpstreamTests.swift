import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// An intercepted HTTP/1 client between requests does not hold an upstream connection: it goes back to the pool and
/// the client's next request takes one again (the same, another client's, or a new one), with the HAR telling which.
@Suite(.tags(.live), .skippedInFastTier) struct ParkedUpstreamTests {
    /// Client A asks, B asks while A sits idle, then A asks again; each prints its statuses and body sizes.
    private func script(_ harness: ProxyHarness, originPort: Int) -> String {
        """
        import sys, proxyclient
        def ask(t, reader, path):
            t.sendall(proxyclient.request("GET", path, host="localhost"))
            status, _, body, _, _ = reader.response()
            print(status, len(body))
        a = proxyclient.tls_tunnel(\(harness.port), "localhost", \(originPort), sys.argv[1])
        ra = proxyclient.Reader(a)
        ask(a, ra, "/hello")
        b = proxyclient.tls_tunnel(\(harness.port), "localhost", \(originPort), sys.argv[1])
        ask(b, proxyclient.Reader(b), "/bytes/10")
        b.close()
        ask(a, ra, "/bytes/20")
        """
    }

    /// Runs the script against a proxy that parks upstreams as soon as a response ends, its pool keeping them
    /// `poolIdle`; returns the three exchanges by path.
    private func run(poolIdle: Duration) async throws -> [String: ExchangeRecord] {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.loopCount = 1
            $0.upstreamParkDelay = .seconds(0)
            $0.upstreamPoolIdle = poolIdle
            $0.idleTimeout = .seconds(120)
        }
        defer { harness.stop() }
        let result = try await PythonClient.run(
            script(harness, originPort: Int(origin.port)), [harness.caCertificate], timeout: .seconds(30))
        await origin.stop()
        #expect(result.stdoutText == "200 17\n200 10\n200 20\n", "\(result)")
        #expect(harness.server.connectionVerdicts.map(\.verdict.kind) == [.intercepted, .intercepted])
        let records = harness.recorder.exchanges
        try #require(records.count == 3, "\(records.map(\.url))")
        return Dictionary(uniqueKeysWithValues: records.map { (URL(string: $0.url)?.path ?? $0.url, $0) })
    }

    @Test func anIdleClientsUpstreamServesAnotherClientAndComesBack() async throws {
        let byPath = try await run(poolIdle: .seconds(120))
        #expect((byPath["/hello"]?.timings.connect ?? -1) >= 0, "the first request opened the upstream connection")
        #expect(
            byPath["/bytes/10"]?.timings.connect == -1,
            "the second client took the connection the idle first one parked")
        #expect(
            byPath["/bytes/20"]?.timings.connect == -1 && byPath["/bytes/20"]?.timings.ssl == -1,
            "the first client's next request took a parked connection again")
    }

    @Test func aClientWhoseParkedUpstreamIsGoneGetsANewOne() async throws {
        // A pool that keeps nothing: every parked connection is closed at once.
        for (path, record) in try await run(poolIdle: .zero) {
            #expect(
                record.timings.connect >= 0 && record.timings.ssl >= 0, "\(path) went over a new upstream connection")
            #expect(record.response?.status == 200)
        }
    }
}
