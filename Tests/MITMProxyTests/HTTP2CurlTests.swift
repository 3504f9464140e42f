import Foundation
import MITMCore
@_spi(CommandLine) @_spi(Testing) import MITMProxy
@_spi(CommandLine) import MITMRecording
import MITMTLS
import Testing

/// curl --http2 through the proxy to an HTTP/2 origin: both legs speak h2, every stream is an exchange.
@Suite(.tags(.live), .skippedInFastTier, .serialized) struct HTTP2CurlTests {
    @Test func getNegotiatesH2OnBothLegsAndIsRecordedAsHTTP2() async throws {
        let harness = try await HTTP2Harness.start()
        let result = try await harness.curl(["--http2", "-w", "\n%{http_version}", harness.url("/hello")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "hello from h2 origin\n2")
        #expect(harness.events.interceptedALPN == ["h2"])
        let record = try #require(harness.events.exchange(endingWith: "/hello"))
        #expect(record.httpVersion == "HTTP/2.0")
        #expect(record.request.method == "GET")
        #expect(record.request.target == "/hello")
        #expect(record.request.headers.first("host") == "origin.test:\(harness.origin.port)")
        #expect(record.response?.status == 200)
        #expect(record.response?.version == .http2)
        #expect(record.responseBodyBytes == 20)
        #expect(record.failure == nil)
        #expect(record.url == harness.url("/hello"))
        let verdict = try #require(await harness.proxy.waitForVerdict(host: "origin.test"))
        #expect(verdict.verdict == .intercepted)
        #expect(await harness.connectionsClosed())
        await harness.stop()
    }

    @Test func tenMiBUploadArrivesIntact() async throws {
        let harness = try await HTTP2Harness.start()
        let body = OriginServer.patternBytes(count: 10 * 1024 * 1024)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("h2-upload-\(UUID().uuidString)").path
        try Data(body).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try await harness.curl(["--http2", "--data-binary", "@\(file)", harness.url("/digest")])
        #expect(result.succeeded, "\(result)")
        let answer = JSON(parsing: result.stdoutText)
        #expect(answer["length"].int == body.count)
        #expect(answer["sha256"].string == (try await OpenSSLDigest.sha256Hex(body)))
        let record = try #require(harness.events.exchange(endingWith: "/digest"))
        #expect(record.requestBodyBytes == body.count)
        #expect(record.request.method == "POST")
        await harness.stop()
    }

    @Test func tenMiBDownloadArrivesIntact() async throws {
        let harness = try await HTTP2Harness.start()
        let count = 10 * 1024 * 1024
        let result = try await harness.curl(["--http2", harness.url("/bytes/\(count)")])
        #expect(result.succeeded, "\(result.description.prefix(300))")
        #expect(result.stdout.count == count)
        #expect(result.stdout == OriginServer.patternBytes(count: count))
        #expect(harness.events.exchange(endingWith: "/bytes/\(count)")?.responseBodyBytes == count)
        await harness.stop()
    }

    @Test func responseTrailersReachTheClient() async throws {
        let harness = try await HTTP2Harness.start()
        let result = try await harness.curl(["--http2", "-D", "-", "-o", "/dev/null", harness.url("/trailers")])
        #expect(result.succeeded, "\(result)")
        let dump = result.stdoutText
        let digest = try await OpenSSLDigest.sha256Hex(Array("trailers follow\n".utf8))
        #expect(dump.contains("HTTP/2 200"))
        #expect(dump.contains("x-body-sha256: \(digest)"))
        #expect(dump.contains("grpc-status: 0"))
        await harness.stop()
    }

    @Test func parallelTransfersShareOneConnection() async throws {
        let harness = try await HTTP2Harness.start()
        let count = 30
        let urls = (0..<count).map { harness.url("/bytes/\(100_000 + $0)") }
        let result = try await harness.curl(
            [
                "--http2", "--parallel", "--parallel-max", "30", "-o", "/dev/null", "-w",
                "%{http_code} %{http_version}\n",
            ]
                + urls.flatMap { [$0, "-o", "/dev/null"] })
        #expect(result.succeeded, "\(result)")
        let lines = result.stdoutText.split(separator: "\n")
        #expect(lines.count == count)
        #expect(lines.allSatisfy { $0 == "200 2" })
        let records = harness.events.exchanges
        #expect(records.count == count)
        #expect(records.allSatisfy { $0.response?.status == 200 && $0.failure == nil })
        #expect(Set(records.map(\.connectionID)).count <= 2)
        await harness.stop()
    }

    @Test func anHTTP1OnlyUpstreamMakesTheClientFallBack() async throws {
        let harness = try await HTTP2Harness.start(.http1)
        let result = try await harness.curl(["--http2", "-w", "\n%{http_version}", harness.url("/hello")])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText == "hello from origin\n1.1")
        #expect(harness.events.interceptedALPN == ["http/1.1"])
        #expect(harness.events.exchange(endingWith: "/hello")?.httpVersion == "HTTP/1.1")
        await harness.stop()
    }

    @Test func streamsAreHTTP2EntriesInAValidHAR() async throws {
        let harness = try await HTTP2Harness.start { $0.bodyCaptureLimit = 1024 }
        let path = FileManager.default.temporaryDirectory.path + "/mitm-proxy-h2-\(UUID().uuidString).har"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let har = try HARWriter(path: path, redact: false) { error in Issue.record("HAR: \(error)") }
        harness.proxy.subscribe { har.record($0) }
        let result = try await harness.curl(
            [
                "--http2", harness.url("/trailers"), "-o", "/dev/null",
                "--next",
            ] + harness.curlProxyOptions + ["--http2", "--data-binary", "posted", harness.url("/digest")])
        #expect(result.succeeded, "\(result)")
        // A stream's exchange is recorded when the stream closes, which may be after curl exits, and events
        // reach subscribers on the recording queue: wait for both, then deliver everything before finishing.
        #expect(await Poll.until { harness.events.exchanges.count == 2 })
        harness.proxy.flushEvents()
        har.finish()
        let summary = try await HARRecordingTests.validated(path)
        #expect(summary.entries.map(\.status) == [200, 200])
        #expect(summary.entries[0].trailers?.contains(["name": "grpc-status", "value": "0"]) == true)
        #expect(summary.entries[1].postLength == 6)
        #expect(Set(summary.entries.compactMap(\.connection)).count == 1)
        let log = JSON(parsing: try String(contentsOfFile: path, encoding: .utf8))["log"]
        #expect(log["entries"].array.map { $0["request"]["httpVersion"].string } == ["HTTP/2.0", "HTTP/2.0"])
        #expect(log["entries"].array.map { $0["response"]["httpVersion"].string } == ["HTTP/2.0", "HTTP/2.0"])
        #expect(log["entries"][0]["response"]["content"]["text"].string == "trailers follow\n")
        #expect((log["entries"][0]["timings"]["ssl"].int ?? -1) >= 0)
        await harness.stop()
    }

    @Test func anUntrustedUpstreamGetsA502OverH2() async throws {
        let harness = try await HTTP2Harness.start(.h2(leaf: .untrusted))
        let result = try await harness.curl([
            "--http2", "-w", "\n%{http_code} %{http_version}", harness.url("/hello", host: "127.0.0.1"),
        ])
        #expect(result.succeeded, "\(result)")
        #expect(result.stdoutText.hasSuffix("\n502 2"))
        #expect(result.stdoutText.contains("not trusted"))
        #expect(harness.events.interceptedALPN == ["h2"])
        let record = try #require(harness.events.exchange(endingWith: "/hello"))
        #expect(record.response?.status == 502)
        #expect(record.httpVersion == "HTTP/2.0")
        await harness.stop()
    }

    @Test func curlPinningTheOriginOverH2IsStillRefused() async throws {
        let harness = try await HTTP2Harness.start()
        let pem = try [UInt8](Data(contentsOf: URL(fileURLWithPath: harness.pki.certificate(.origin))))
        let pin = try X509Certificate.certificates(inFileBytes: pem)[0].spkiSHA256Base64
        let result = try await harness.curl([
            "--http2", "--pinnedpubkey", "sha256//\(pin)", harness.url("/hello", host: "pinned.test"),
        ])
        #expect(result.status == 90, "curl must fail its pin check: \(result)")
        let verdict = try #require(await harness.proxy.waitForVerdict(host: "pinned.test"))
        #expect(verdict.verdict == .refused)
        #expect(harness.events.interceptedALPN == ["h2"])
        #expect(harness.events.exchanges.isEmpty)
        await harness.stop()
    }
}
