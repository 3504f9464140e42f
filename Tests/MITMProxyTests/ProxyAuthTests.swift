import Foundation
import MITMCore
import Testing

/// `--proxy-auth`: every proxy request (CONNECT, absolute-form) without the right Basic credentials gets `407` with a
/// `Proxy-Authenticate` challenge; with them it is relayed (and intercepted) as usual; the proxy's own pages asked for
/// directly need none; and the credentials are never logged, recorded or passed on.
@Suite(.tags(.live), .skippedInFastTier) struct ProxyAuthTests {
    private static let password = "s3cret-Pass:word"

    private func start() async throws -> ProxyHarness {
        try await ProxyHarness.start {
            $0.proxyCredentials = try! ProxyCredentials(parsing: "qa:" + Self.password)
            $0.bodyCaptureLimit = 65_536
        }
    }

    @Test func aTunnelNeedsTheCredentials() async throws {
        let proxy = try await start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let missing = try await Curl.run(through: proxy, ["-v", origin.url("/hello")])
        #expect(
            !missing.succeeded && missing.stderrText.contains("< HTTP/1.1 407 Proxy Authentication Required"),
            "\(missing)")
        #expect(
            missing.stderrText.contains("< Proxy-Authenticate: Basic realm=\"mitm-proxy\", charset=\"UTF-8\""),
            "\(missing)")
        let wrong = try await Curl.run(through: proxy, ["-v", "--proxy-user", "qa:guess", origin.url("/hello")])
        #expect(!wrong.succeeded && wrong.stderrText.contains("< HTTP/1.1 407"), "\(wrong)")
        let right = try await Curl.run(through: proxy, ["--proxy-user", "qa:" + Self.password, origin.url("/hello")])
        #expect(right.stdoutText == "hello from origin", "\(right)")
        #expect(await Poll.until { proxy.server.verdict(for: "127.0.0.1")?.verdict == .intercepted })
        let reasons = proxy.events.compactMap { event -> String? in
            if case .badRequest(_, _, let reason) = event { reason } else { nil }
        }
        #expect(
            reasons.contains(
                "CONNECT 127.0.0.1:\(origin.port): proxy authentication required: the request carries no Proxy-Authorization"
            ),
            "\(reasons)")
        #expect(
            reasons.contains(
                "CONNECT 127.0.0.1:\(origin.port): proxy authentication failed: wrong user name or password"),
            "\(reasons)")
        await origin.stop()
    }

    /// Wrong credentials again and again from one address: each `407` still comes, later ones after a growing wait
    /// (0, 0.25, 0.5, 1, 2 s); the right credentials are then let through without one.
    @Test func repeatedWrongCredentialsAreAnsweredSlowerAndTheRightOnesAtOnce() async throws {
        let proxy = try await start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        var took: [Duration] = []
        for _ in 0..<5 {
            let started = ContinuousClock.now
            let wrong = try await Curl.run(through: proxy, ["-v", "--proxy-user", "qa:guess", origin.url("/hello")])
            took.append(ContinuousClock.now - started)
            #expect(!wrong.succeeded && wrong.stderrText.contains("< HTTP/1.1 407"), "\(wrong)")
        }
        // Lower bounds only: a loaded machine makes everything slower, never the wait shorter.
        #expect(took[3] >= .milliseconds(900) && took[4] >= .milliseconds(1900), "\(took)")
        // A sixth wrong try would wait 4 s; the right one waits nothing, so it takes about what the first wrong try took
        // (which did not wait either, and shows how loaded the machine is), well under that plus 3 s.
        let started = ContinuousClock.now
        let right = try await Curl.run(through: proxy, ["--proxy-user", "qa:" + Self.password, origin.url("/hello")])
        #expect(right.stdoutText == "hello from origin", "\(right)")
        #expect(ContinuousClock.now - started < took[0] + .seconds(3), "\(took)")
        await origin.stop()
    }

    @Test func aPlainRequestNeedsTheCredentialsAndTheOriginNeverSeesThem() async throws {
        let proxy = try await start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let missing = try await Curl.run(through: proxy, ["-i", origin.url("/hello")])
        #expect(missing.stdoutText.hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\n"), "\(missing)")
        #expect(missing.stdoutText.contains("Proxy-Authenticate: Basic realm=\"mitm-proxy\""), "\(missing)")
        let echoed = try await Curl.run(
            through: proxy, ["--proxy-user", "qa:" + Self.password, origin.url("/headers")])
        let fields =
            ((try? JSONSerialization.jsonObject(with: Data(echoed.stdout)) as? [String: Any])?["headers"] as? [[String]])
            ?? []
        #expect(!fields.isEmpty && !fields.contains { $0[0].lowercased() == "proxy-authorization" }, "\(echoed)")
        let direct = try await Subprocess.run(
            "curl", ["-sS", "--max-time", "10", "http://127.0.0.1:\(proxy.port)/ca.pem"])
        #expect(
            direct.stdoutText.hasPrefix("-----BEGIN CERTIFICATE-----"),
            "the pages asked for directly need no credentials: \(direct)")
        let recorded = proxy.recorder.exchanges
        #expect(
            recorded.count >= 2 && recorded.allSatisfy { !$0.request.headers.contains("proxy-authorization") },
            "\(recorded)")
        await origin.stop()
    }

    /// The binary with `--proxy-auth @FILE`, HAR, events, report and `-v`: after right and wrong credentials, neither
    /// password nor any Basic token appears in the console, the HAR, the events or the report, which do hold the traffic.
    @Test func theCredentialsAppearInNoLogEventHAROrReport() async throws {
        let directory = try TemporaryDirectory.make("auth-records")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "qa:\(Self.password)\n".write(toFile: directory + "/credentials", atomically: true, encoding: .utf8)
        let wrongPassword = "wrong-Guess-4711"
        let proxy = try await ProxyProcess.start([
            "--proxy-auth", "@" + directory + "/credentials", "-v", "--har", directory + "/run.har",
            "--events", directory + "/events.jsonl", "--report", directory + "/report.json",
        ])
        let origin = try await OriginServer.start()
        let plain = try await OriginServer.start(.plainHTTP)
        let proxyURL = "http://127.0.0.1:\(proxy.port)"
        for (user, url) in [
            ("qa:" + Self.password, origin.url("/hello")), ("qa:" + Self.password, plain.url("/hello")),
            ("qa:" + wrongPassword, origin.url("/hello")), ("qa:" + wrongPassword, plain.url("/hello")),
        ] {
            _ = try await Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "10", "--proxy", proxyURL, "--proxy-user", user,
                    "--cacert", proxy.caDirectory + "/ca.pem", url,
                ])
        }
        _ = try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "10", "--proxy", proxyURL, "-H",
                "Proxy-Authorization: Basic "
                    + Data("qa:\(Self.password)".utf8).base64EncodedString(), plain.url("/headers"),
            ])
        #expect(
            await Poll.until { proxy.outputText.contains("127.0.0.1:\(origin.port): INTERCEPTED") },
            "\(proxy.outputText)")
        await proxy.stop()
        await origin.stop()
        await plain.stop()
        let har = (try? String(contentsOfFile: directory + "/run.har", encoding: .utf8)) ?? ""
        let events = (try? String(contentsOfFile: directory + "/events.jsonl", encoding: .utf8)) ?? ""
        let report = (try? String(contentsOfFile: directory + "/report.json", encoding: .utf8)) ?? ""
        #expect(
            har.contains("/hello") && har.contains("Proxy Authentication Required") && events.contains("\"status\":407")
                && report.contains("127.0.0.1"),
            "the records hold the traffic: \(har.prefix(400))")
        let secrets =
            [Self.password, wrongPassword]
            + ["qa:" + Self.password, "qa:" + wrongPassword].map { Data($0.utf8).base64EncodedString() }
        for (name, text) in [("console", proxy.outputText), ("HAR", har), ("events", events), ("report", report)] {
            for secret in secrets {
                #expect(!text.contains(secret), "\(name) holds \(secret)")
            }
        }
        #expect(
            proxy.outputText.contains("proxy authentication failed: wrong user name or password"), "\(proxy.outputText)"
        )
    }
}
