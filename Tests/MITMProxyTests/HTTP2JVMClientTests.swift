import Foundation
import MITMProxy
import MITMTLS
import Testing

/// Java's HttpClient negotiates h2 through the proxy; its pinned variant is still refused.
@Suite(
    .tags(.live), .skippedInFastTier, .serialized,
    .enabled(if: (try? Subprocess.executablePath("java")) != nil, "needs a JDK (java on PATH)"))
struct HTTP2JavaClientTests {
    private func java(_ harness: HTTP2Harness, url: String, pin: String? = nil) async throws -> SubprocessResult {
        try await Subprocess.run(
            "java",
            [
                RepositoryLayout.h2JavaClient, String(harness.proxy.port), url,
                harness.proxy.caCertificatePath,
            ] + (pin.map { [$0] } ?? []),
            timeout: .seconds(60))
    }

    @Test func javaHttpClientGetsH2() async throws {
        let harness = try await HTTP2Harness.start()
        let result = try await java(harness, url: harness.url("/hello"))
        #expect(result.stdoutText == "HTTP_2 200 hello from h2 origin\n", "\(result)")
        #expect(harness.events.interceptedALPN == ["h2"])
        #expect(harness.events.exchange(endingWith: "/hello")?.httpVersion == "HTTP/2.0")
        #expect(await harness.proxy.waitForVerdict(host: "origin.test")?.verdict == .intercepted)
        await harness.stop()
    }

    @Test func javaPinningTheOriginIsRefused() async throws {
        let harness = try await HTTP2Harness.start()
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: harness.pki.certificate(.origin))))
        let pin = try X509Certificate.certificates(inFileBytes: pem)[0].spkiSHA256Base64
        let result = try await java(harness, url: harness.url("/hello", host: "pinned.test"), pin: pin)
        #expect(result.stdoutText.hasPrefix("FAILED"), "\(result)")
        #expect(await harness.proxy.waitForVerdict(host: "pinned.test")?.verdict == .refused)
        #expect(harness.events.exchanges.isEmpty)
        await harness.stop()
    }
}

/// Debian's libokhttp-java and the okio it needs.
private let okHttpClassPath = ["/usr/share/java/okhttp.jar", "/usr/share/java/okio.jar"]

/// OkHttp (Debian's libokhttp-java) negotiates h2 through the proxy; with a CertificatePinner it is refused.
@Suite(
    .tags(.live), .skippedInFastTier, .serialized,
    .enabled(
        if: (try? Subprocess.executablePath("java")) != nil
            && FileManager.default.fileExists(atPath: okHttpClassPath[0]),
        "needs a JDK and libokhttp-java"))
struct HTTP2OkHttpClientTests {
    private func okHttp(_ harness: HTTP2Harness, url: String, pin: String? = nil) async throws -> SubprocessResult {
        try await Subprocess.run(
            "java",
            [
                "-cp", okHttpClassPath.joined(separator: ":"), RepositoryLayout.h2OkHttpClient,
                String(harness.proxy.port), url, harness.proxy.caCertificatePath,
            ]
                + (pin.map { [$0] } ?? []), timeout: .seconds(60))
    }

    @Test func okHttpGetsH2() async throws {
        let harness = try await HTTP2Harness.start()
        let result = try await okHttp(harness, url: harness.url("/hello"))
        #expect(result.stdoutText == "h2 200 hello from h2 origin\n", "\(result)")
        #expect(harness.events.exchange(endingWith: "/hello")?.httpVersion == "HTTP/2.0")
        await harness.stop()
    }

    @Test func okHttpWithACertificatePinnerIsRefused() async throws {
        let harness = try await HTTP2Harness.start()
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: harness.pki.certificate(.origin))))
        let pin = try X509Certificate.certificates(inFileBytes: pem)[0].spkiSHA256Base64
        let result = try await okHttp(harness, url: harness.url("/hello", host: "pinned.test"), pin: pin)
        #expect(
            result.stdoutText.hasPrefix(
                "FAILED javax.net.ssl.SSLPeerUnverifiedException: Certificate pinning failure!"), "\(result)")
        #expect(await harness.proxy.waitForVerdict(host: "pinned.test")?.verdict == .refused)
        #expect(harness.events.exchanges.isEmpty)
        await harness.stop()
    }
}
