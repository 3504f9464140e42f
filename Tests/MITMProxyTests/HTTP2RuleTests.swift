import Foundation
import MITMCore
import MITMProxy
import MITMRules
import Testing

/// The QA rules on HTTP/2 connections, which stay HTTP/2: answers from files (streamed as the client's window
/// allows) and fixed answers, delays holding a request and its body, header, status and body rewrites, and faults
/// as stream resets. Through curl --http2 to the h2 test origin.
@Suite(.tags(.live), .skippedInFastTier) struct HTTP2RuleTests {
    @Test func localAnswersAndRewritesKeepHTTP2() async throws {
        let directory = try TemporaryDirectory.make("h2-rules")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = (0..<600_000).map { UInt8(($0 * 13) % 256) }
        try Data(big).write(to: URL(fileURLWithPath: directory + "/big.bin"))
        try Data("{\"replaced\": true}".utf8).write(to: URL(fileURLWithPath: directory + "/replacement.json"))
        var rewrite = RuleActions()
        rewrite.status = 299
        rewrite.responseHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "X-Rewritten", value: "yes")])
        rewrite.requestHeaders = HeaderEdits(
            setFields: [HTTPHeaderField(name: "X-Added", value: "by-rule")], removeNames: ["user-agent"])
        var body = RuleActions()
        body.bodyFile = directory + "/replacement.json"
        let rules = [
            try RuleFlags.mapLocal("origin.test/big=\(directory)/big.bin", baseDirectory: "/"),
            try! RuleFlags.respond("origin.test/down=503"),
            try! RuleFlags.fault("origin.test/reset=reset-before-headers"),
            TrafficRule(name: "rewrite", pattern: try! URLPattern(parsing: "origin.test/headers"), actions: rewrite),
            TrafficRule(name: "body", pattern: try! URLPattern(parsing: "origin.test/hello"), actions: body),
        ]
        let h2 = try await HTTP2Harness.start { $0.rules = rules }
        defer { h2.harness.stop() }
        let output = TemporaryDirectory.path("h2-big")
        let file = try await h2.curl(["--http2", h2.url("/big"), "-o", output, "-w", "%{http_version} %{http_code}"])
        #expect(file.stdoutText == "2 200", "\(file)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))) == big)
        let range = try await h2.curl(["--http2", h2.url("/big"), "-r", "599990-", "-w", " %{http_code}"])
        #expect(range.stdout == Array(big[599_990...]) + Array(" 206".utf8), "\(range.stdout.count) bytes")
        let down = try await h2.curl([
            "--http2", h2.url("/down"), "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
        ])
        #expect(down.stdoutText == "2 503", "\(down)")
        let reset = try await h2.curl(["--http2", h2.url("/reset")])
        #expect(reset.status == 92, "\(reset)")
        let headers = try await h2.curl(["--http2", "-i", h2.url("/headers"), "-w", "\n%{http_code}"])
        #expect(headers.stdoutText.contains("x-rewritten: yes"), "\(headers)")
        #expect(headers.stdoutText.hasSuffix("\n299"), "\(headers)")
        #expect(headers.stdoutText.contains("\"x-added\", \"by-rule\""), "\(headers)")
        #expect(!headers.stdoutText.contains("user-agent"), "\(headers)")
        let replaced = try await h2.curl(["--http2", h2.url("/hello"), "-w", " %{http_version}"])
        #expect(replaced.stdoutText == "{\"replaced\": true} 2", "\(replaced)")
        let exchangeRules = h2.events.exchanges.map {
            ($0.url.split(separator: "/").last.map(String.init) ?? "", $0.rules)
        }
        #expect(exchangeRules.contains { $0.0 == "headers" && $0.1 == ["rewrite"] }, "\(exchangeRules)")
        await h2.origin.stop()
    }

    @Test func aDelayHoldsTheRequestAndItsBody() async throws {
        let h2 = try await HTTP2Harness.start { configuration in
            configuration.rules = [try! RuleFlags.delay("origin.test/digest=1500ms")]
        }
        defer { h2.harness.stop() }
        let file = TemporaryDirectory.path("h2-upload")
        let upload = (0..<100_000).map { UInt8($0 % 199) }
        try Data(upload).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let started = ContinuousClock.now
        let result = try await h2.curl(["--http2", "--data-binary", "@" + file, h2.url("/digest")])
        #expect(ContinuousClock.now - started >= .milliseconds(1500))
        let expected = try await OpenSSLDigest.sha256Hex(upload)
        #expect(result.stdoutText.contains("\"length\": 100000") && result.stdoutText.contains(expected), "\(result)")
        await h2.origin.stop()
    }
}
