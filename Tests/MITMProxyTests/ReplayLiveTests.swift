import Foundation
import Testing

/// Replay, edit and resend, and compose from the web UI's API of the real binary: the request goes through the proxy's
/// own port as a client's would, reaches the real TLS origin again, and is recorded as a new flow linked to the
/// original (`replayOf` in the list, `_replayOf` in the HAR). The same access rules as every other path.
@Suite struct ReplayLiveTests {
    private static let token = "replay-test-token"

    private func curlThrough(_ proxy: ProxyProcess, _ url: String, _ extra: [String] = []) async throws
        -> SubprocessResult
    {
        try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "30", "--proxy", "http://127.0.0.1:\(proxy.port)",
                "--cacert", proxy.caDirectory + "/ca.pem",
            ] + extra + [url], timeout: .seconds(40))
    }

    /// The flow whose URL is `url` and that replays `original` (nil: any), once the list has it.
    private func waitForFlow(_ api: WebUIAPI, url: String, replayOf original: Int?) async throws -> JSON? {
        var found: JSON?
        _ = try await Poll.until(timeout: .seconds(20)) {
            found = try await api.flows().last {
                $0["url"].string == url && (original == nil || $0["replayOf"].int == original)
            }
            return found != nil
        }
        return found
    }

    @Test func aReplayReachesTheOriginAgainAndIsANewFlowLinkedToTheOriginal() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        defer { origin.terminate() }
        let plain = try await OriginServer.start(.plainHTTP)
        defer { plain.terminate() }
        try await ProxyProcess.running(["--resolve", "origin.test:127.0.0.1", "--web-token", Self.token]) { proxy in
            let api = WebUIAPI(base: "http://127.0.0.1:\(proxy.port)", token: Self.token)
            let url = origin.url("/headers", hostname: "origin.test")
            let first = try await curlThrough(proxy, url, ["-H", "X-Test: first"])
            #expect(first.stdoutText.contains("first"), "\(first)")
            let original = try #require(try await waitForFlow(api, url: url, replayOf: nil)?["id"].int)

            // As it was.
            let replayed = try await api.call("POST", "/api/send", json: #"{"flow": \#(original)}"#)
            #expect(replayed.status == 200 && JSON(parsing: replayed.body)["status"].int == 200, "\(replayed)")
            let replay = try #require(
                try await waitForFlow(api, url: url, replayOf: original), "a new flow links to #\(original)")
            #expect(replay["id"].int != original)
            let seen = try await origin.requestsSeen()
            #expect(seen.filter { $0 == "GET /headers" }.count == 2, "the origin received it again: \(seen)")
            let detail = JSON(parsing: try await api.call("GET", "/api/flows/\(replay["id"].int ?? 0)").body)
            #expect(detail["response"]["body"]["text"].string?.contains("first") == true, "the same header went again")
            #expect(detail["summary"]["replayOf"].int == original)

            // Edited: another path and header; the origin receives the edit.
            let editedURL = origin.url("/headers?resent=1", hostname: "origin.test")
            let edit = #"{"flow": \#(original), "url": "\#(editedURL)", "headers": [["X-Test", "resent"]]}"#
            let resent = try await api.call("POST", "/api/send", json: edit)
            #expect(resent.status == 200, "\(resent)")
            let edited = try #require(try await waitForFlow(api, url: editedURL, replayOf: original))
            let editedDetail = JSON(parsing: try await api.call("GET", "/api/flows/\(edited["id"].int ?? 0)").body)
            let echoed = editedDetail["response"]["body"]["text"].string ?? ""
            #expect(echoed.contains("resent") && !echoed.contains("first"), "\(echoed)")

            // Composed from scratch, over plain HTTP too.
            let composedURL = plain.url("/hello")
            let composed = try await api.call(
                "POST", "/api/send", json: #"{"method": "GET", "url": "\#(composedURL)"}"#)
            #expect(composed.status == 200 && JSON(parsing: composed.body)["status"].int == 200, "\(composed)")
            let composedFlow = try #require(try await waitForFlow(api, url: composedURL, replayOf: nil))
            #expect(composedFlow["replayOf"].isNull)

            // The HAR names the original.
            let har = JSON(parsing: try await api.call("GET", "/api/har").body)
            let entries = har["log"]["entries"].array
            #expect(entries.filter { $0["_replayOf"].int == original }.count == 2, "\(entries.map { $0["_replayOf"] })")
        }
    }

    @Test func anHTTP2OnlyOriginIsReplayedOverHTTP2() async throws {
        let origin = try await OriginServer.start(.tls(.origin), script: RepositoryLayout.h2OriginScript)
        defer { origin.terminate() }
        try await ProxyProcess.running(["--resolve", "origin.test:127.0.0.1", "--web-token", Self.token]) { proxy in
            let api = WebUIAPI(base: "http://127.0.0.1:\(proxy.port)", token: Self.token)
            let url = origin.url("/hello", hostname: "origin.test")
            let first = try await curlThrough(proxy, url, ["--http2"])
            #expect(first.stdoutText == "hello from h2 origin", "\(first)")
            let original = try #require(try await waitForFlow(api, url: url, replayOf: nil)?["id"].int)
            let replayed = try await api.call("POST", "/api/send", json: #"{"flow": \#(original)}"#)
            #expect(replayed.status == 200 && JSON(parsing: replayed.body)["status"].int == 200, "\(replayed)")
            let replay = try #require(try await waitForFlow(api, url: url, replayOf: original))
            #expect(
                replay["protocol"].string == "h2" && replay["status"].int == 200 && replay["size"].int == 20,
                "\(replay)")
        }
    }

    @Test func whatTheReplayCannotDoIsSaid() async throws {
        try await ProxyProcess.running(["--web-token", Self.token]) { proxy in
            let api = WebUIAPI(base: "http://127.0.0.1:\(proxy.port)", token: Self.token)
            let gone = try await api.call("POST", "/api/send", json: #"{"flow": 999}"#)
            #expect(gone.status == 404 && gone.body.contains("flow 999 is no longer kept"), "\(gone)")
            let stopped = try await OriginServer.start(.plainHTTP)
            await stopped.stop()
            let refused = try await api.call(
                "POST", "/api/send", json: #"{"method": "GET", "url": "\#(stopped.url("/"))"}"#)
            #expect(
                refused.status == 200 && JSON(parsing: refused.body)["status"].int == 502,
                "the proxy's own 502 is the answer: \(refused)")
            let bad = try await api.call("POST", "/api/send", json: #"{"method": "GET", "url": "file:///etc/passwd"}"#)
            #expect(bad.status == 400 && bad.body.contains("is not an absolute http:// or https:// URL"), "\(bad)")
        }
    }

    /// A web UI user on another machine (a network namespace) is held to the rules every client from there is held to.
    @Test(.enabled(if: NetworkNamespace.isAvailable, "network namespaces need root and iproute2"))
    func aReplayNeedsTheTokenAndTheHeaderAndCannotReachThisMachineFromAnother() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let origin = try await OriginServer.start(.tls(.origin))
        defer { origin.terminate() }
        try await ProxyProcess.running([
            "--resolve", "origin.test:127.0.0.1", "--web-port", "0", "--web-host", "0.0.0.0",
            "--web-token", Self.token,
        ]) { proxy in
            let pattern = #"Web UI on this machine: http://127\.0\.0\.1:\d+/"#
            _ = await Poll.until { proxy.outputText.range(of: pattern, options: .regularExpression) != nil }
            let line = try #require(
                proxy.outputText.range(of: pattern, options: .regularExpression).map { proxy.outputText[$0] })
            let webPort = try #require(Int(line.split(separator: ":").last?.dropLast() ?? ""))
            let here = WebUIAPI(base: "http://127.0.0.1:\(webPort)", token: Self.token)
            let url = origin.url("/hello", hostname: "origin.test")
            _ = try await curlThrough(proxy, url)
            let original = try #require(try await waitForFlow(here, url: url, replayOf: nil)?["id"].int)
            let order = #"{"flow": \#(original)}"#
            let runInSpace: @Sendable ([String]) async throws -> SubprocessResult = {
                try await space.run(["curl"] + $0, timeout: .seconds(50))
            }

            let noToken = WebUIAPI(base: "http://\(space.hostAddress):\(webPort)", token: nil, curl: runInSpace)
            let withoutToken = try await noToken.call("POST", "/api/send", json: order)
            #expect(withoutToken.status == 403, "\(withoutToken)")
            let there = WebUIAPI(base: "http://\(space.hostAddress):\(webPort)", token: Self.token, curl: runInSpace)
            let withoutHeader = try await there.call("POST", "/api/send", json: order, csrfHeader: false)
            #expect(
                withoutHeader.status == 403 && withoutHeader.body.contains("needs the X-Mitm-Proxy-UI header"),
                "\(withoutHeader)")
            let toThisMachine = try await there.call("POST", "/api/send", json: order)
            #expect(toThisMachine.status == 502, "\(toThisMachine)")
            #expect(
                toThisMachine.body.contains("403")
                    && toThisMachine.body.contains("may not reach this machine's services"),
                "the replay is refused as the user's own request would be: \(toThisMachine)")
            #expect(
                try await origin.requestsSeen().filter { $0 == "GET /hello" }.count == 1,
                "the origin never saw the refused replay")

            let fromHere = try await here.call("POST", "/api/send", json: order)
            #expect(fromHere.status == 200, "this machine's user may: \(fromHere)")
            #expect(try await origin.requestsSeen().filter { $0 == "GET /hello" }.count == 2)

            // Nor can that user send a paused request of this machine's client to another host.
            let set = #"{"breakpoints": [{"match": "origin.test/hello"}]}"#
            #expect(try await here.call("POST", "/api/breakpoints", json: set).status == 200)
            async let held = curlThrough(proxy, url + "?paused=1")
            let paused = try await here.waitForPaused()
            let id = try #require(paused.first?["id"].int)
            let elsewhere = #"{"url": "https://127.0.0.1:\#(origin.port)/hello"}"#
            let moved = try await there.call("POST", "/api/paused/\(id)/continue", json: elsewhere)
            #expect(moved.status == 403 && moved.body.contains("may change only in its path and query"), "\(moved)")
            let pathOnly = #"{"url": "\#(url)?edited=1"}"#
            #expect(try await there.call("POST", "/api/paused/\(id)/continue", json: pathOnly).status == 204)
            #expect(try await held.stdoutText == "hello from origin")
            #expect(try await origin.requestsSeen().contains("GET /hello?edited=1"))
        }
    }
}
