import Foundation
import MITMProxy
import MITMTLS
import Testing

/// Go's net/http negotiates h2 through the proxy; its pinned variant is still refused.
@Suite(
    .tags(.live), .skippedInFastTier, .serialized,
    .enabled(if: (try? Subprocess.executablePath("go")) != nil, "needs Go (go on PATH)"))
struct HTTP2GoClientTests {
    private func go(_ harness: HTTP2Harness, url: String, pin: String? = nil) async throws -> SubprocessResult {
        var environment = ProcessInfo.processInfo.environment
        environment["GO111MODULE"] = "off"
        environment["GOFLAGS"] = ""
        return try await Subprocess.run(
            "go",
            ["run", RepositoryLayout.h2GoClient, harness.harness.url, harness.harness.caCertificate, url]
                + (pin.map { [$0] } ?? []), environment: environment, timeout: .seconds(90))
    }

    @Test func goGetsH2() async throws {
        let harness = try await HTTP2Harness.start()
        let result = try await go(harness, url: harness.url("/hello"))
        #expect(result.stdoutText == "HTTP/2.0 200 hello from h2 origin\n", "\(result)")
        #expect(harness.events.exchange(endingWith: "/hello")?.httpVersion == "HTTP/2.0")
        #expect(await harness.proxy.waitForVerdict(host: "origin.test")?.verdict == .intercepted)
        await harness.stop()
    }

    @Test func goPinningTheOriginIsRefused() async throws {
        let harness = try await HTTP2Harness.start()
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: harness.pki.certificate(.origin))))
        let pin = try X509Certificate.certificates(inFileBytes: pem)[0].spkiSHA256Base64
        let result = try await go(harness, url: harness.url("/hello", host: "pinned.test"), pin: pin)
        #expect(result.stdoutText.hasPrefix("FAILED"), "\(result)")
        #expect(await harness.proxy.waitForVerdict(host: "pinned.test")?.verdict == .refused)
        #expect(harness.events.exchanges.isEmpty)
        await harness.stop()
    }
}
