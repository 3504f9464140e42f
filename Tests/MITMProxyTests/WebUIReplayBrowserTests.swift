import Foundation
import Testing

/// Replay, edit and resend, and request and response breakpoints (head and body edits), clicked in headless Chromium (Selenium, Fixtures/web_ui_replay.py) against
/// the real binary and a real TLS origin.
@Suite(.serialized, .enabled(if: Chromium.starts, "needs Chromium that starts (scripts/install-deps test installs it)"))
struct WebUIReplayBrowserTests {
    @Test func replayEditAndABreakpointFromThePage() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        defer { origin.terminate() }
        try await ProxyProcess.running(["--resolve", "origin.test:127.0.0.1"]) { proxy in
            let run = try await Subprocess.run(
                "/usr/bin/env",
                [
                    "python3", RepositoryLayout.fixtures + "/web_ui_replay.py", "--proxy-port", String(proxy.port),
                    "--ca", proxy.caDirectory + "/ca.pem", "--origin-port", String(origin.port), "--screenshots",
                    Chromium.screenshotDirectory,
                ], timeout: .seconds(300))
            try #require(run.succeeded, "the browser run failed: \(run)")
            let seen = JSON(parsing: run.stdoutText)
            #expect(
                seen["replayResult"].string == "Sent: the proxy answered 200. The new flow is in the list.", "\(seen)")
            #expect(seen["replayOfShown"].string?.hasPrefix("Replay of flow #") == true, "\(seen)")
            #expect(seen["replayBadge"].string == "replay", "the replay is marked in the list: \(seen)")
            #expect(seen["editResult"].string?.hasPrefix("Sent: the proxy answered 200") == true, "\(seen)")
            #expect(
                seen["pausedShown"].string?.contains("request paused by web UI breakpoint origin.test/headers") == true,
                "\(seen)")
            let answer = seen["afterContinue"].string ?? ""
            #expect(
                answer.contains("edited-while-paused") && !answer.contains("before-pause"),
                "the edit made while paused arrived: \(seen)")

            #expect(
                seen["pausedResponseShown"].string?.contains("response paused by web UI breakpoint origin.test/hello")
                    == true, "\(seen)")
            #expect(
                seen["pausedResponseBody"].string == "hello from origin\n"
                    || seen["pausedResponseBody"].string == "hello from origin",
                "\(seen)")
            #expect(seen["afterResponseContinue"].string == "edited-response-in-browser\n203", "\(seen)")
            #expect(seen["pausedRequestBody"].string == "body-before-pause", "\(seen)")
            #expect(
                seen["afterBodyContinue"].string?.contains(#""length": 22"#) == true,
                "the origin digested the edited body: \(seen)")

            let requests = try await origin.requestsSeen()
            #expect(
                requests.filter { $0 == "GET /headers" }.count == 3,
                "curl, the replay and the edited resend: \(requests)")
            // The edited resend reached the origin with the header typed in the page.
            let flows = JSON(
                parsing: try await Subprocess.run(
                    "curl", ["-sS", "--noproxy", "*", "http://127.0.0.1:\(proxy.port)/api/flows"]
                ).stdoutText)
            let resent = flows["flows"].array.filter { $0["replayOf"].int != nil }.map { $0["id"].int ?? 0 }
            #expect(resent.count == 2, "\(flows)")
            var bodies: [String] = []
            for id in resent {
                let detail = JSON(
                    parsing: try await Subprocess.run(
                        "curl", ["-sS", "--noproxy", "*", "http://127.0.0.1:\(proxy.port)/api/flows/\(id)"]
                    ).stdoutText)
                bodies.append(detail["response"]["body"]["text"].string ?? "")
            }
            #expect(
                bodies.contains { $0.contains("from-curl") } && bodies.contains { $0.contains("edited-in-browser") },
                "\(bodies)")
        }
    }
}
