import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import MITMRules
import Testing

/// A client that goes idle between requests gives its upstream back and, when nothing is held, its rules state: the
/// rules still answer its next requests, and unruled ones still reach the origin over the parked upstream.
@Suite(.tags(.live), .skippedInFastTier) struct RulesAfterIdleTests {
    @Test func rulesStillApplyAfterTheClientIdled() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let teapot = try RuleFlags.respond("localhost/teapot=418")
        let harness = try await ProxyHarness.start {
            $0.loopCount = 1
            $0.upstreamParkDelay = .seconds(0)
            $0.idleTimeout = .seconds(120)
            $0.rules = [teapot]
        }
        defer { harness.stop() }
        let script = """
            import sys, proxyclient
            t = proxyclient.tls_tunnel(\(harness.port), "localhost", \(origin.port), sys.argv[1])
            reader = proxyclient.Reader(t)
            for path in ["/teapot", "/hello", "/teapot", "/hello"]:
                t.sendall(proxyclient.request("GET", path, host="localhost"))
                status, _, body, _, _ = reader.response()
                print(path, status, len(body) if path == "/hello" else "")
            """
        let result = try await PythonClient.run(script, [harness.caCertificate], timeout: .seconds(30))
        await origin.stop()
        #expect(result.stdoutText == "/teapot 418 \n/hello 200 17\n/teapot 418 \n/hello 200 17\n", "\(result)")
        let hellos = harness.recorder.exchanges.filter { $0.url.hasSuffix("/hello") }
        try #require(hellos.count == 2)
        #expect(hellos[1].timings.connect == -1, "the second /hello went over the upstream parked while idle")
        let teapots = harness.recorder.exchanges.filter { $0.url.hasSuffix("/teapot") }
        #expect(teapots.count == 2 && teapots.allSatisfy { $0.rules == ["--respond localhost/teapot=418"] })
    }
}
