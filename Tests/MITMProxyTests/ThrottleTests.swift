import Foundation
import MITMCore
import MITMProxy
import MITMRules
import Testing

/// `--throttle` with real curl through the proxy: the throttled host is as slow as its profile says (a timed
/// assertion is the feature itself here), another host is not slowed, the proxy's memory stays flat because a
/// throttled link pauses the origin instead of buffering it, and interception and verdicts are unchanged.
@Suite(.tags(.live), .skippedInFastTier) struct ThrottleTests {
    private static let names = [
        "api.origin.test": "127.0.0.1", "www.origin.test": "127.0.0.1", "pinned.test": "127.0.0.1",
    ]

    /// Seconds curl took to transfer `url` once its TLS session with the proxy was up (its `time_total` less its
    /// `time_pretransfer`: the throttle slows the bytes, not the CONNECT and the handshakes, which a loaded machine under
    /// a sanitizer can make take seconds), and whether it got `bytes` bytes.
    private func timedDownload(_ harness: ProxyHarness, _ url: String, bytes: Int) async throws -> Double {
        let result = try await Curl.run(
            through: harness,
            [url, "-o", "/dev/null", "-w", "%{size_download} %{time_total} %{time_pretransfer}"])
        let fields = result.stdoutText.split(separator: " ")
        #expect(fields.first.map(String.init) == String(bytes), "\(result)")
        guard fields.count == 3, let total = Double(fields[1]), let pretransfer = Double(fields[2]) else { return 0 }
        return total - pretransfer
    }

    @Test func aThrottledHostIsSlowAndAnotherIsNot() async throws {
        let origin = try await OriginServer.start()
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = Self.names
            configuration.rules = [try! RuleFlags.throttle("api.origin.test=down=512kbit")]
        }
        defer { harness.stop() }
        // 256 KiB at 512 kbit/s: 4.1 s on the link.
        let throttled = try await timedDownload(
            harness, origin.url("/bytes/262144", hostname: "api.origin.test"), bytes: 262_144)
        #expect(throttled >= 3.5, "took \(throttled) s")
        let free = try await timedDownload(
            harness, origin.url("/bytes/262144", hostname: "www.origin.test"), bytes: 262_144)
        #expect(free < 2, "took \(free) s")
        let firing = await harness.recorder.first {
            if case .ruleFired(let f) = $0 { f.action.hasPrefix("throttled") } else { false }
        }
        guard case .ruleFired(let rule)? = firing else {
            Issue.record("no throttle event")
            return
        }
        #expect(rule.host == "api.origin.test" && rule.rules == ["--throttle api.origin.test=down=512kbit"])
        // The throttled connection's exchanges name the rule (the HAR's `_rule`), the other host's do not.
        let exchanges = harness.recorder.exchanges
        #expect(exchanges.first { $0.host == "api.origin.test" }?.rules == ["--throttle api.origin.test=down=512kbit"])
        #expect(exchanges.first { $0.host == "www.origin.test" }?.rules == [])
        #expect(harness.server.verdict(for: "api.origin.test")?.verdict == .intercepted)
        await origin.stop()
    }

    @Test func http2AndPassedThroughTunnelsAreThrottledToo() async throws {
        let h2 = try await HTTP2Harness.start { configuration in
            configuration.rules = [try! RuleFlags.throttle("origin.test=down=1mbit")]
            configuration.tunnelPolicy = TunnelPolicy(passThroughHosts: [try! HostPattern("pinned.test")])
            configuration.rules.append(try! RuleFlags.throttle("pinned.test=down=1mbit"))
        }
        defer { h2.harness.stop() }
        // 256 KiB at 1 Mbit/s: 2.1 s, over HTTP/2 (the rule is a throttle only: the host keeps h2).
        let result = try await h2.curl([
            "--http2", h2.url("/bytes/262144"), "-o", "/dev/null", "-w", "%{http_version} %{time_total}",
        ])
        let fields = result.stdoutText.split(separator: " ")
        #expect(fields.first == "2", "\(result)")
        #expect((fields.count == 2 ? Double(fields[1]) ?? 0 : 0) >= 1.8, "\(result)")
        // A passed-through tunnel: the client talks TLS with the origin itself, through the same slow link.
        let passed = try await h2.curl([
            "--http2", "--cacert", h2.pki.root, h2.url("/bytes/262144", host: "pinned.test"), "-o", "/dev/null",
            "-w", "%{size_download} %{time_total}",
        ])
        let passedFields = passed.stdoutText.split(separator: " ")
        #expect(passedFields.first == "262144", "\(passed)")
        #expect((passedFields.count == 2 ? Double(passedFields[1]) ?? 0 : 0) >= 1.8, "\(passed)")
        #expect(h2.proxy.verdict(for: "pinned.test") == nil)
        await h2.origin.stop()
    }

    @Test func uploadsAndPlainHTTPAreThrottledToo() async throws {
        let origin = try await OriginServer.start(.plainHTTP)
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = Self.names
            configuration.rules = [try! RuleFlags.throttle("api.origin.test=up=512kbit,latency=400ms")]
        }
        defer { harness.stop() }
        let file = TemporaryDirectory.path("upload")
        try Data(count: 131_072).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let started = ContinuousClock.now
        let upload = try await Curl.run(
            through: harness, ["-T", file, origin.url("/digest", hostname: "api.origin.test")])
        #expect(upload.stdoutText.contains("\"length\": 131072"), "\(upload)")
        // 1 Mbit at 512 kbit/s is 2 s, plus the latency of the round trips.
        #expect(ContinuousClock.now - started >= .milliseconds(2000))
        await origin.stop()
    }

    @Test func aThrottledPinnedHostIsStillRefused() async throws {
        let origin = try await OriginServer.start()
        let pki = try await TestPKI.shared()
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = Self.names
            configuration.silenceWindow = .seconds(1)
            configuration.rules = [try! RuleFlags.throttle("3g")]
        }
        defer { harness.stop() }
        let pin = try await Subprocess.run(
            "bash",
            [
                "-c",
                "openssl x509 -in \(pki.certificate(.origin)) -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            ])
        let pinned = try await Curl.run(
            through: harness,
            [
                "--pinnedpubkey", "sha256//" + pin.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines),
                origin.url("/hello", hostname: "pinned.test"),
            ])
        #expect(pinned.status == 90, "\(pinned)")
        let verdict = await harness.server.waitForVerdict(host: "pinned.test")
        #expect(verdict?.verdict == .refused, "\(String(describing: verdict))")
        await origin.stop()
    }

    @Test func offlineHostsAreRefusedAtOnce() async throws {
        let origin = try await OriginServer.start()
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = Self.names
            configuration.rules = [try! RuleFlags.throttle("api.origin.test=offline")]
        }
        defer { harness.stop() }
        let result = try await Curl.run(through: harness, ["-v", origin.url("/hello", hostname: "api.origin.test")])
        #expect(result.status == 56, "\(result)")
        #expect(result.stderrText.contains("CONNECT tunnel failed, response 502"), "\(result.stderrText)")
        #expect(try await origin.requestsSeen().isEmpty)
        await origin.stop()
    }

    @Test func aThrottledDownloadDoesNotGrowTheProxy() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ProxyProcess.start([
            "-q", "--resolve", "api.origin.test:127.0.0.1", "--throttle", "api.origin.test=down=64mbit",
        ])
        let curl = { (size: Int) in
            try await Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "60", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                    proxy.caDirectory + "/ca.pem",
                    origin.url("/bytes/\(size)", hostname: "api.origin.test"), "-o", "/dev/null", "-w",
                    "%{size_download} %{time_total}",
                ], timeout: .seconds(70))
        }
        _ = try await curl(1_000_000)
        let before = try proxy.memoryKilobytes("VmHWM")
        // 32 MiB at 64 Mbit/s: 4.2 s, while the origin could send it all at once. Held whole, it would add 32 MiB.
        let result = try await curl(33_554_432)
        let fields = result.stdoutText.split(separator: " ")
        #expect(fields.first == "33554432", "\(result)")
        #expect((fields.count == 2 ? Double(fields[1]) ?? 0 : 0) >= 3.5, "\(result)")
        let after = try proxy.memoryKilobytes("VmHWM")
        #expect(after - before < 8 * 1024, "VmHWM grew from \(before) kB to \(after) kB")
        await proxy.stop()
        await origin.stop()
    }
}
