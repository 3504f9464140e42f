import Foundation
import Testing

/// `--advertise` on the built binary: the start banner and the onboarding page a phone opens at the proxy's address name
/// the advertised address instead of this machine's; a bad value exits 2 saying what to give.
@Suite(.tags(.live), .skippedInFastTier) struct AdvertiseCLITests {
    @Test func theBannerAndTheOnboardingPageNameTheAdvertisedAddress() async throws {
        let proxy = try await ProxyProcess.start(["--advertise", "192.0.2.7:9999", "--no-web"])
        #expect(await Poll.until { proxy.outputText.contains("Proxy authentication:") }, "\(proxy.outputText)")
        let page = try await Subprocess.run("curl", ["-sS", "--max-time", "10", "http://127.0.0.1:\(proxy.port)/"])
        let output = proxy.outputText
        await proxy.stop()
        #expect(output.contains("  server 192.0.2.7  port 9999   (--advertise)\n"), "\(output)")
        #expect(
            output.contains(
                "then open http://mitm.proxy/ on it to install the CA (or http://192.0.2.7:9999/ before the proxy is set)"
            ),
            "\(output)")
        #expect(
            page.stdoutText.contains("Set this device's proxy to server <b>192.0.2.7</b> port <b>9999</b>"), "\(page)")
    }

    @Test func aBadValueExits2SayingWhatToGive() async throws {
        let result = try await Subprocess.run(
            try BuiltBinary.path(), ["--advertise", "192.0.2.7", "--ca-dir", TemporaryDirectory.path("unused-ca")],
            timeout: .seconds(90))
        #expect(result.status == 2, "\(result)")
        #expect(
            result.stderrText.contains(
                "--advertise 192.0.2.7: \"192.0.2.7\" has no port; give HOST:PORT, the address and port a phone "
                    + "should type as its proxy"), "\(result)")
    }
}
