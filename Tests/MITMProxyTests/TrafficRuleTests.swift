import Foundation
import MITMCore
import MITMProxy
import MITMRules
import Testing

/// The QA toolbox with real curl through the proxy and real TLS origins: map local, map remote, fixed answers,
/// delays, faults, and a rules file that is read again when it changes. Names under `origin.test` are resolved
/// to 127.0.0.1 by the proxy (`--resolve`), and the test PKI's certificate covers them.
@Suite(.tags(.live), .skippedInFastTier) struct TrafficRuleTests {
    private static let names = ["api.origin.test": "127.0.0.1", "www.origin.test": "127.0.0.1"]

    private func proxy(_ rules: [TrafficRule], file: String? = nil) async throws -> ProxyHarness {
        try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = Self.names
            configuration.rules = rules
            configuration.rulesFile = file
        }
    }

    private func fileWith(_ bytes: [UInt8], named name: String) throws -> String {
        let directory = try TemporaryDirectory.make("rules")
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func mapLocalAnswersFromTheFileAndTheOriginSeesNoRequest() async throws {
        let origin = try await OriginServer.start()
        let body = (0..<70_000).map { UInt8(($0 * 7) % 256) }
        let file = try fileWith(body, named: "small.bin")
        let harness = try await proxy([try RuleFlags.mapLocal("api.origin.test/small=\(file)", baseDirectory: "/")])
        defer { harness.stop() }
        let output = TemporaryDirectory.path("download")
        let url = origin.url("/small", hostname: "api.origin.test")
        let result = try await Curl.run(through: harness, [url, "-o", output, "-w", "%{http_code} %{content_type}"])
        #expect(result.stdoutText == "200 application/octet-stream", "\(result)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))) == body)
        let range = try await Curl.run(through: harness, [url, "-r", "100-109", "-w", " %{http_code}"])
        #expect(range.stdout == Array(body[100...109]) + Array(" 206".utf8), "\(range)")
        let head = try await Curl.run(through: harness, ["-I", url])
        #expect(head.stdoutText.contains("Content-Length: 70000"), "\(head)")
        // Other paths still reach the origin; the mapped one never did.
        let other = try await Curl.run(through: harness, [origin.url("/hello", hostname: "api.origin.test")])
        #expect(other.stdoutText == "hello from origin")
        #expect(try await origin.requestsSeen() == ["GET /hello"])
        let exchange = try #require(harness.recorder.exchanges.first { $0.url.hasSuffix("/small") })
        #expect(exchange.rules == ["--map-local api.origin.test/small=\(file)"])
        // Interception and verdicts are unchanged: the client was shown a forged certificate and intercepted.
        #expect(harness.server.verdict(for: "api.origin.test")?.verdict == .intercepted)
        await origin.stop()
    }

    @Test func aHostMappedWhollyToADirectoryIsNeverDialled() async throws {
        let directory = try TemporaryDirectory.make("mock-site")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/v1", withIntermediateDirectories: true)
        try Data("{\"flag\": true}".utf8).write(to: URL(fileURLWithPath: directory + "/v1/config.json"))
        try Data("<h1>mock</h1>".utf8).write(to: URL(fileURLWithPath: directory + "/index.html"))
        // Nothing listens there: a dial would fail and be reported.
        let refusing = try RefusingPort()
        let harness = try await proxy([try RuleFlags.mapLocal("api.origin.test=\(directory)", baseDirectory: "/")])
        defer { harness.stop() }
        let base = "https://api.origin.test:\(refusing.port)"
        let config = try await Curl.run(through: harness, [base + "/v1/config.json", "-w", " %{content_type}"])
        #expect(config.stdoutText == "{\"flag\": true} application/json", "\(config)")
        let index = try await Curl.run(through: harness, [base + "/", "-w", " %{content_type}"])
        #expect(index.stdoutText == "<h1>mock</h1> text/html; charset=utf-8", "\(index)")
        let missing = try await Curl.run(
            through: harness, [base + "/v1/missing.json", "-o", "/dev/null", "-w", "%{http_code}"])
        #expect(missing.stdoutText == "404", "\(missing)")
        #expect(!harness.events.contains { if case .upstreamFailed = $0 { true } else { false } }, "\(harness.events)")
        #expect(harness.server.verdict(for: "api.origin.test")?.verdict == .intercepted)
    }

    @Test func mapRemoteFetchesFromTheOtherOriginUnderTheAskedForCertificate() async throws {
        let asked = try await OriginServer.start()
        let other = try await OriginServer.start()
        let harness = try await proxy([
            try RuleFlags.mapRemote("api.origin.test/=https://www.origin.test:\(other.port)/")
        ])
        defer { harness.stop() }
        let result = try await Curl.run(through: harness, ["-v", asked.url("/headers", hostname: "api.origin.test")])
        #expect(result.succeeded, "\(result)")
        let described = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        let host = (described["headers"] as? [[String]])?.first { $0.first?.lowercased() == "host" }?.last
        #expect(host == "www.origin.test:\(other.port)", "\(described)")
        #expect(result.stderrText.contains("CN=api.origin.test"), "\(result.stderrText)")
        #expect(try await other.requestsSeen() == ["GET /headers"])
        #expect(try await asked.requestsSeen().isEmpty)
        // The rule's line says where the request went.
        let firing = await harness.recorder.first {
            if case .ruleFired(let f) = $0 { f.action.contains("sent to https://www.origin.test") } else { false }
        }
        #expect(firing != nil)
        await asked.stop()
        await other.stop()
    }

    @Test func mapRemoteSwitchesOriginsPerRequestOnOneConnection() async throws {
        let asked = try await OriginServer.start()
        let plain = try await OriginServer.start(.plainHTTP)
        let harness = try await proxy([try RuleFlags.mapRemote("api.origin.test/v2=http://127.0.0.1:\(plain.port)/")])
        defer { harness.stop() }
        // One curl, one intercepted connection: mapped, not mapped, mapped again.
        let result = try await Curl.run(
            through: harness,
            [
                asked.url("/v2/hello", hostname: "api.origin.test"), asked.url("/hello", hostname: "api.origin.test"),
                asked.url("/v2/status/201", hostname: "api.origin.test"), "-w", " %{http_code}\n",
            ])
        #expect(result.stdoutText == "hello from origin 200\nhello from origin 200\nstatus 201\n 201\n", "\(result)")
        #expect(try await plain.requestsSeen() == ["GET /hello", "GET /status/201"])
        #expect(try await asked.requestsSeen() == ["GET /hello"])
        let connections = Set(harness.recorder.exchanges.map(\.connectionID))
        #expect(connections.count == 1, "\(harness.recorder.exchanges)")
        await asked.stop()
        await plain.stop()
    }

    @Test func fixedAnswersDelaysAndFaults() async throws {
        let origin = try await OriginServer.start()
        let harness = try await proxy([
            try RuleFlags.respond("api.origin.test/down=503"),
            try RuleFlags.delay("api.origin.test/chunked=1500ms"),
            try RuleFlags.fault("api.origin.test/reset=reset-before-headers"),
            try RuleFlags.fault("api.origin.test/close=close-before-headers"),
            try RuleFlags.fault("api.origin.test/bytes=reset-after-headers"),
        ])
        defer { harness.stop() }
        let down = try await Curl.run(
            through: harness, [origin.url("/down", hostname: "api.origin.test"), "-w", "%{http_code}"])
        #expect(down.stdoutText.hasSuffix("503"), "\(down)")
        let started = ContinuousClock.now
        let slow = try await Curl.run(
            through: harness,
            [
                origin.url("/chunked/1000", hostname: "api.origin.test"), "-o", "/dev/null",
                "-w", "%{http_code}",
            ])
        #expect(slow.stdoutText == "200")
        #expect(ContinuousClock.now - started >= .milliseconds(1500))
        let reset = try await Curl.run(through: harness, [origin.url("/reset", hostname: "api.origin.test")])
        #expect(reset.status == 56, "\(reset)")
        let closed = try await Curl.run(through: harness, [origin.url("/close", hostname: "api.origin.test")])
        #expect(closed.status == 52, "\(closed)")
        let cut = try await Curl.run(
            through: harness,
            [origin.url("/bytes/100000", hostname: "api.origin.test"), "-o", "/dev/null", "-w", "%{http_code}"])
        #expect(cut.stdoutText == "200" && !cut.succeeded, "\(cut)")
        #expect(try await origin.requestsSeen() == ["GET /chunked/1000", "GET /bytes/100000"])
        await origin.stop()
    }

    @Test func headersStatusAndBodyAreRewrittenOnTheirWay() async throws {
        let origin = try await OriginServer.start()
        let replacement = try fileWith(Array("{\"error\": \"rewritten\"}".utf8), named: "error.json")
        var edits = RuleActions()
        edits.requestHeaders = HeaderEdits(
            setFields: [HTTPHeaderField(name: "X-Debug", value: "1")], removeNames: ["User-Agent"])
        edits.responseHeaders = HeaderEdits(
            setFields: [HTTPHeaderField(name: "Cache-Control", value: "no-store")], removeNames: ["Server"])
        var broken = RuleActions()
        broken.status = 500
        broken.bodyFile = replacement
        let harness = try await proxy([
            TrafficRule(name: "edits", pattern: try URLPattern(parsing: "api.origin.test/headers"), actions: edits),
            TrafficRule(name: "broken", pattern: try URLPattern(parsing: "api.origin.test/chunked"), actions: broken),
        ])
        defer { harness.stop() }
        let headers = try await Curl.run(through: harness, ["-i", origin.url("/headers", hostname: "api.origin.test")])
        #expect(headers.stdoutText.contains("Cache-Control: no-store"), "\(headers)")
        #expect(!headers.stdoutText.contains("Server: mitm-proxy-test-origin"), "\(headers)")
        #expect(headers.stdoutText.contains("\"X-Debug\",\n   \"1\""), "\(headers)")
        #expect(!headers.stdoutText.contains("User-Agent"), "\(headers)")
        // A chunked upstream body replaced by the file: the client gets the file with its length, and status 500.
        let rewritten = try await Curl.run(
            through: harness, [origin.url("/chunked/100000", hostname: "api.origin.test"), "-w", " %{http_code}"])
        #expect(rewritten.stdoutText == "{\"error\": \"rewritten\"} 500", "\(rewritten)")
        // The exchange ends when the upstream's (discarded) body has.
        let ended = await harness.recorder.first {
            if case .exchange(let record) = $0 { record.url.contains("/chunked/") } else { false }
        }
        guard case .exchange(let record)? = ended else {
            Issue.record("no exchange for /chunked/")
            return
        }
        #expect(record.rules == ["broken"] && record.response?.status == 500 && record.responseBodyBytes == 22)
        await origin.stop()
    }

    @Test func aBrokenRulesFileKeepsThePreviousRulesAndAFixedOneIsReadAgain() async throws {
        let origin = try await OriginServer.start()
        let directory = try TemporaryDirectory.make("rules-file")
        let path = directory + "/qa.yaml"
        try "rules:\n  - name: teapot\n    match: api.origin.test/tea\n    respond: 418\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let harness = try await proxy([], file: path)
        defer { harness.stop() }
        let url = origin.url("/tea", hostname: "api.origin.test")
        let first = try await Curl.run(through: harness, [url, "-o", "/dev/null", "-w", "%{http_code}"])
        #expect(first.stdoutText == "418")
        try "rules:\n  - name: teapot\n    match: api.origin.test/tea\n    respond: [418\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        // The file is looked at once a second; a sanitized proxy on a loaded machine takes seconds per request.
        let refused = await harness.recorder.first(timeout: .seconds(40)) {
            if case .ruleFired(let firing) = $0 { firing.action.contains("keeping the previous 1 rule") } else { false }
        }
        #expect(refused != nil)
        let still = try await Curl.run(through: harness, [url, "-o", "/dev/null", "-w", "%{http_code}"])
        #expect(still.stdoutText == "418")
        try "rules:\n  - name: gone\n    match: api.origin.test/tea\n    respond: 410\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let changed = await Poll.until(timeout: .seconds(40)) {
            (try? await Curl.run(through: harness, [url, "-o", "/dev/null", "-w", "%{http_code}"]).stdoutText) == "410"
        }
        #expect(changed)
        await origin.stop()
    }
}
