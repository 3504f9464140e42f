import Foundation
import Testing

/// Breakpoints in the real binary, as a QA engineer uses them: curl sends a request through the proxy to a real TLS
/// origin, a rule pauses it (or its response), and the web UI's API (with its token and POST header) continues it
/// edited (head and body), aborts it, or lets it time out. Over HTTP/1.1 (origin.py) and HTTP/2 (curl --http2 to h2_origin.py).
@Suite struct BreakpointLiveTests {
    private static let token = "breakpoint-test-token"

    private func rulesFile(_ directory: String) throws -> String {
        let path = directory + "/breakpoints.yaml"
        try """
        rules:
          - name: hold headers
            match: origin.test/headers
            breakpoint: request
          - name: hold hello
            match: origin.test/hello
            breakpoint: {at: request}
          - name: short hold
            match: origin.test/bytes/10
            breakpoint: {at: request, timeout: 1s}
          - name: hold both
            match: origin.test/digest
            breakpoint: both
          - name: short response hold
            match: origin.test/bytes/3
            breakpoint: {at: response, timeout: 1s}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private func exercise(http2: Bool) async throws {
        let directory = try TemporaryDirectory.make("breakpoints")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let origin =
            http2
            ? try await OriginServer.start(.tls(.origin), script: RepositoryLayout.h2OriginScript)
            : try await OriginServer.start(.tls(.origin))
        defer { origin.terminate() }
        try await ProxyProcess.running([
            "--rules", try rulesFile(directory), "--resolve", "origin.test:127.0.0.1",
            "--web-token", Self.token,
        ]) { proxy in
            let api = WebUIAPI(base: "http://127.0.0.1:\(proxy.port)", token: Self.token)
            func curl(_ path: String, _ extra: [String] = []) async throws -> SubprocessResult {
                try await Subprocess.run(
                    "curl",
                    [
                        "-sS", "--max-time", "40", "--proxy", "http://127.0.0.1:\(proxy.port)",
                        "--cacert", proxy.caDirectory + "/ca.pem", http2 ? "--http2" : "--http1.1",
                        "-w", "\n%{http_code} %{http_version}",
                    ] + extra + [origin.url(path, hostname: "origin.test")],
                    timeout: .seconds(50))
            }

            // Continue, edited: the header and the path changed while paused are what the origin receives.
            async let held = curl("/headers", ["-H", "X-Test: original"])
            let paused = try await api.waitForPaused()
            try #require(paused.count == 1, "the request is listed as paused")
            #expect(paused[0]["rule"].string == "hold headers")
            #expect(paused[0]["url"].string == origin.url("/headers", hostname: "origin.test"))
            #expect(
                paused[0]["headers"].array.contains {
                    $0[0].string?.lowercased() == "x-test" && $0[1].string == "original"
                })
            let id = try #require(paused[0]["id"].int)
            let edit =
                #"{"url": "\#(origin.url("/headers?edited=1", hostname: "origin.test"))", "headers": [["X-Test", "edited"], ["Accept", "*/*"]]}"#
            let continued = try await api.call("POST", "/api/paused/\(id)/continue", json: edit)
            #expect(continued.status == 204, "\(continued)")
            let answer = try await held
            #expect(answer.stdoutText.hasSuffix(http2 ? "200 2" : "200 1.1"), "\(answer)")
            #expect(answer.stdoutText.contains("edited"), "the edited header arrived: \(answer.stdoutText)")
            #expect(!answer.stdoutText.contains("original"), "\(answer.stdoutText)")
            #expect(answer.stdoutText.contains("/headers?edited=1"), "the edited path arrived: \(answer.stdoutText)")
            #expect(try await api.paused().isEmpty)

            // Abort: the client gets the proxy's 502 naming the breakpoint.
            async let aborted = curl("/hello")
            let second = try await api.waitForPaused()
            let abortID = try #require(second.first?["id"].int)
            #expect(try await api.call("POST", "/api/paused/\(abortID)/abort").status == 204)
            let abortAnswer = try await aborted
            #expect(
                abortAnswer.stdoutText.hasPrefix(
                    "mitm-proxy: 502 Bad Gateway: the request was aborted at breakpoint \"hold hello\" from the web UI"),
                "\(abortAnswer)")
            #expect(abortAnswer.stdoutText.hasSuffix(http2 ? "502 2" : "502 1.1"))
            let answeredTwice = try await api.call("POST", "/api/paused/\(abortID)/continue")
            #expect(
                answeredTwice.status == 404
                    && answeredTwice.body.contains("no exchange is paused as number \(abortID)"), "\(answeredTwice)")

            // Nobody answers: after its 1 s bound the request is aborted with a 504 that says so.
            let timedOut = try await curl("/bytes/10")
            #expect(
                timedOut.stdoutText.contains(
                    "504 Gateway Timeout: the request was held at breakpoint \"short hold\" for 1s "
                        + "without an answer from the web UI, and was aborted"), "\(timedOut)")
            #expect(try await api.paused().isEmpty)

            // Both phases, bodies edited: the origin digests the edited request body, the client gets the edited response.
            async let posted = curl("/digest", ["-i", "--data-binary", "original body"])
            let request = try await waitForBody(api, phase: "request")
            #expect(request["body"]["text"].string == "original body", "\(request)")
            let requestEdit =
                #"{"headers": [["Content-Type", "text/plain"], ["X-Test", "edited"]], "body": "edited body!"}"#
            #expect(
                try await api.call("POST", "/api/paused/\(try #require(request["id"].int))/continue", json: requestEdit)
                    .status == 204)
            let response = try await waitForBody(api, phase: "response")
            #expect(response["status"].int == 200)
            let digest = try #require(response["body"]["text"].string)
            #expect(digest.contains("12"), "the origin got the edited body's 12 bytes: \(digest)")
            let responseEdit =
                #"{"status": 201, "headers": [["X-Edited", "yes"], ["Content-Type", "text/plain"]], "body": "replaced at the breakpoint\n"}"#
            #expect(
                try await api.call(
                    "POST", "/api/paused/\(try #require(response["id"].int))/continue", json: responseEdit
                ).status == 204)
            let edited = try await posted
            #expect(edited.stdoutText.hasSuffix(http2 ? "201 2" : "201 1.1"), "\(edited)")
            #expect(edited.stdoutText.lowercased().contains("x-edited: yes"), "\(edited)")
            #expect(edited.stdoutText.lowercased().contains("content-length: 27"), "\(edited)")
            #expect(edited.stdoutText.contains("replaced at the breakpoint\n"), "\(edited)")

            // A held response nobody answers is aborted with a 504 after its bound.
            let lateResponse = try await curl("/bytes/3")
            #expect(
                lateResponse.stdoutText.contains(
                    "504 Gateway Timeout: the response was held at breakpoint \"short response hold\" for 1s"),
                "\(lateResponse)")
            #expect(try await api.paused().isEmpty)

            // The flows say what happened.
            let flows = try await api.flows()
            #expect(
                flows.contains {
                    $0["url"].string == origin.url("/headers?edited=1", hostname: "origin.test")
                        && $0["status"].int == 200
                }, "\(flows)")
            #expect(
                flows.contains {
                    $0["url"].string == origin.url("/hello", hostname: "origin.test") && $0["status"].int == 502
                        && $0["failure"].string?.contains("aborted at breakpoint") == true
                }, "\(flows)")
        }
    }

    /// The paused exchange at `phase` once its body is there to edit.
    private func waitForBody(_ api: WebUIAPI, phase: String) async throws -> JSON {
        var found: JSON?
        _ = try await Poll.until(timeout: .seconds(60)) {
            found = try await api.paused().first { $0["phase"].string == phase && $0["body"]["text"].string != nil }
            return found != nil
        }
        return try #require(found, "no \(phase) paused with its body")
    }

    @Test func http1RequestsPauseAndAreContinuedEditedAbortedOrTimedOut() async throws {
        try await exercise(http2: false)
    }

    @Test func http2RequestsPauseAndAreContinuedEditedAbortedOrTimedOut() async throws {
        try await exercise(http2: true)
    }

    @Test func aBreakpointSetFromTheWebUIPausesAndTheAPIIsGuarded() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        defer { origin.terminate() }
        try await ProxyProcess.running(["--resolve", "origin.test:127.0.0.1", "--web-token", Self.token]) { proxy in
            let api = WebUIAPI(base: "http://127.0.0.1:\(proxy.port)", token: Self.token)
            let set = #"{"breakpoints": [{"match": "origin.test/hello", "method": "GET", "timeout": "2m"}]}"#
            let refused = try await api.call("POST", "/api/breakpoints", json: set, csrfHeader: false)
            #expect(refused.status == 403 && refused.body.contains("needs the X-Mitm-Proxy-UI header"), "\(refused)")
            let accepted = try await api.call("POST", "/api/breakpoints", json: set)
            #expect(accepted.status == 200, "\(accepted)")
            #expect(JSON(parsing: accepted.body)["breakpoints"][0]["timeout"].string == "120s", "\(accepted)")
            async let held = Subprocess.run(
                "curl",
                [
                    "-sS", "--max-time", "40", "--proxy", "http://127.0.0.1:\(proxy.port)",
                    "--cacert", proxy.caDirectory + "/ca.pem", origin.url("/hello", hostname: "origin.test"),
                ], timeout: .seconds(50))
            let paused = try await api.waitForPaused()
            let id = try #require(paused.first?["id"].int)
            #expect(paused.first?["rule"].string == "web UI breakpoint origin.test/hello")
            let forged = try await api.call("POST", "/api/paused/\(id)/continue", csrfHeader: false)
            #expect(forged.status == 403, "a cross-site POST cannot release it: \(forged)")
            #expect(try await api.call("POST", "/api/paused/\(id)/continue").status == 204)
            #expect(try await held.stdoutText.contains("hello"))
            #expect(try await api.call("POST", "/api/breakpoints", json: #"{"breakpoints": []}"#).status == 200)
        }
    }
}
