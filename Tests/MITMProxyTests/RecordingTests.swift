import Dispatch
import Foundation
import MITMCore
import Testing

/// Recording runs off the loops: a subscriber that stops reading (`--events -` into a pipe nobody reads)
/// delays only the recording, never the relaying, and what it missed is counted, not waited for.
@Suite struct RecordingTests {
    @Test func aStalledSubscriberDoesNotStallTheProxy() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let gate = DispatchSemaphore(value: 0)
        proxy.server.subscribe { _ in
            gate.wait()
            gate.signal()
        }
        let urls = (0..<20).flatMap { ["-o", "/dev/null", origin.url("/hello?\($0)")] }
        let result = try await Curl.run(through: proxy, urls + ["-w", "%{http_code} "])
        #expect(result.stdoutText == String(repeating: "200 ", count: 20), "\(result)")
        gate.signal()
        #expect(await Poll.until { proxy.recorder.exchanges.count == 20 }, "nothing recorded was lost once the subscriber caught up")
    }
}
