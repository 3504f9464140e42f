import Foundation
import MITMCore
import Testing

/// Issue 15, run as the real binary around real clients: expectations read from the app's own pin
/// configuration, fallbacks after a refusal, and pin-failure reports posted through the proxy.
@Suite(.tags(.live), .skippedInFastTier) struct ExpectFromTests {
    private static let backupPin = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="
    private static let hosts = [
        "pinned.test", "old.test", "cdn.test", "img.cdn.test", "api.origin.test", "www.origin.test",
        "reports.origin.test",
    ]

    private func runProxy(_ arguments: [String], command: [String]) async throws -> SubprocessResult {
        let pki = try await TestPKI.shared()
        let all =
            [
                "--ca-dir", TemporaryDirectory.path("expect-from-ca"), "--upstream-ca", pki.root, "--silence-window",
                "0.5",
            ]
            + Self.hosts.flatMap { ["--resolve", "\($0):127.0.0.1"] } + arguments + ["--"] + command
        return try await Subprocess.run(try BuiltBinary.path(), all, timeout: .seconds(60))
    }

    /// An Info.plist pinning pinned.test, and a network security config with a live pin-set (pinned.test), an
    /// expired one (old.test) and one with includeSubdomains and a single pin (cdn.test).
    private func configurationFiles(pin: String) throws -> (plist: String, nsc: String) {
        let directory = try TemporaryDirectory.make("expect-from")
        let day = 86_400.0
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        let past = formatter.string(from: Date().addingTimeInterval(-30 * day))
        let future = formatter.string(from: Date().addingTimeInterval(400 * day))
        let plist: [String: Any] = [
            "NSAppTransportSecurity": [
                "NSPinnedDomains": [
                    "pinned.test": [
                        "NSPinnedLeafIdentities": [["SPKI-SHA256-BASE64": pin], ["SPKI-SHA256-BASE64": Self.backupPin]]
                    ]
                ]
            ]
        ]
        let plistPath = directory + "/Info.plist"
        try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0).write(
            to: URL(fileURLWithPath: plistPath))
        let nsc = """
            <?xml version="1.0" encoding="utf-8"?>
            <network-security-config>
                <base-config><trust-anchors><certificates src="system"/><certificates src="user"/></trust-anchors></base-config>
                <domain-config>
                    <domain>pinned.test</domain>
                    <pin-set expiration="\(future)"><pin digest="SHA-256">\(pin)</pin><pin digest="SHA-256">\(Self.backupPin)</pin></pin-set>
                </domain-config>
                <domain-config>
                    <domain>old.test</domain>
                    <pin-set expiration="\(past)"><pin digest="SHA-256">\(pin)</pin><pin digest="SHA-256">\(Self.backupPin)</pin></pin-set>
                </domain-config>
                <domain-config>
                    <domain includeSubdomains="true">cdn.test</domain>
                    <pin-set><pin digest="SHA-256">\(pin)</pin></pin-set>
                </domain-config>
            </network-security-config>
            """
        let nscPath = directory + "/network_security_config.xml"
        try Data(nsc.utf8).write(to: URL(fileURLWithPath: nscPath))
        return (plistPath, nscPath)
    }

    @Test func expectationsFromTheAppsConfigurationDecideTheExitCode() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let pin = try await originPin()
        let files = try configurationFiles(pin: pin)
        let pinned = "--pinnedpubkey 'sha256//\(pin)'"
        func script(pinning: String) -> [String] {
            [
                "/bin/sh", "-c",
                """
                curl -sS --max-time 10 -o /dev/null https://old.test:\(origin.port)/hello || exit 7
                for host in pinned.test cdn.test img.cdn.test; do
                  curl -sS --max-time 10 -o /dev/null \(pinning) https://$host:\(origin.port)/hello
                done
                exit 0
                """,
            ]
        }
        let arguments = ["--expect-from", files.plist, "--expect-from", files.nsc]
        let report = try TemporaryDirectory.make("expect-from-report") + "/report.json"
        let holding = try await runProxy(arguments + ["--report", report], command: script(pinning: pinned))
        #expect(holding.status == 0, "\(holding)")
        let output = holding.stderrText
        #expect(
            output.contains("expectations from \(files.plist):\n  refused:pinned.test (domain pinned.test)\n"),
            "\(holding)")
        #expect(
            output.contains(
                "expectations from \(files.nsc):\n  refused:pinned.test (domain pinned.test)\n"
                    + "  intercepted:old.test (domain old.test): pin-set expired on "), "\(holding)")
        #expect(
            output.contains("  refused:cdn.test (domain cdn.test)\n  refused:*.cdn.test (domain cdn.test)\n"),
            "\(holding)")
        #expect(output.contains("warning: \(files.nsc) (domain old.test): the pin-set expired on "), "\(holding)")
        #expect(output.contains("warning: \(files.nsc) (domain cdn.test): only one pin and no backup"), "\(holding)")
        #expect(
            output.contains("PASS  expect intercepted:old.test: old.test: intercepted (pin-set expired on "),
            "\(holding)")
        #expect(output.contains("PASS  expect refused:*.cdn.test: img.cdn.test: refused"), "\(holding)")
        #expect(output.contains("evidence: client curl (pid "), "\(holding)")
        #expect(
            output.contains(
                "(trust proven); 1 connection; expectation refused:pinned.test from \(files.plist) (domain pinned.test)"
            ),
            "\(holding)")

        for verifying in [["--expect-from", files.nsc], []] {
            let verified = try await Subprocess.run(
                try BuiltBinary.path(), ["verify", "--report", report] + verifying, timeout: .seconds(30))
            #expect(verified.status == 0, "\(verified)")
            #expect(
                verified.stdoutText.contains(
                    "PASS  expect intercepted:old.test: old.test: intercepted (pin-set expired on "), "\(verified)")
        }

        let broken = try await runProxy(arguments, command: script(pinning: ""))
        #expect(broken.status == 1, "\(broken)")
        #expect(
            broken.stderrText.contains("FAIL  expect refused:pinned.test: pinned.test was intercepted, not refused"),
            "\(broken)")

        let overridden = try await runProxy(
            arguments + [
                "--expect", "intercepted:pinned.test", "--expect", "intercepted:*.cdn.test",
                "--expect", "intercepted:cdn.test",
            ], command: script(pinning: ""))
        #expect(overridden.status == 0, "\(overridden)")
        #expect(
            overridden.stderrText.contains(
                "--expect intercepted:pinned.test overrides refused:pinned.test from \(files.plist) (domain pinned.test): the flag wins"
            ),
            "\(overridden)")
        await origin.stop()
    }

    @Test func anUnreadableConfigurationIsAUsageErrorNamingTheFile() async throws {
        let path = try TemporaryDirectory.make("expect-from-bad") + "/Info.plist"
        try Data("<plist><dict>".utf8).write(to: URL(fileURLWithPath: path))
        let result = try await Subprocess.run(
            try BuiltBinary.path(),
            [
                "--ca-dir", TemporaryDirectory.path("expect-from-ca"),
                "--expect-from", path, "--", "true",
            ], timeout: .seconds(30))
        #expect(result.status == 2, "\(result)")
        #expect(result.stderrText.contains("--expect-from: \(path) is not a readable property list"), "\(result)")
    }

    /// The binary plist that crashed Foundation (see MITMPinsTests' CLITests) is a usage error here too.
    @Test func aBinaryPlistThatCrashedFoundationIsAUsageError() async throws {
        let path = RepositoryLayout.root + "/fuzz/corpus/ats-plist/regression-set-behind-bplist0-header"
        let result = try await Subprocess.run(
            try BuiltBinary.path(),
            [
                "--ca-dir", TemporaryDirectory.path("expect-from-ca"),
                "--expect-from", path, "--", "true",
            ], timeout: .seconds(30))
        #expect(result.status == 2, "\(result)")
        #expect(result.stderrText.contains("--expect-from: \(path) is not a usable property list"), "\(result)")
    }

    @Test func aClientThatFallsBackToPlainHTTPAfterARefusalIsReported() async throws {
        let pki = try await TestPKI.shared()
        let secure = try await OriginServer.start(.tls(.origin))
        let clear = try await OriginServer.start(.plainHTTP)
        let directory = try TemporaryDirectory.make("fallback")
        let script = directory + "/fallback.py"
        // Trusts only the real root: the proxy's forged certificate is refused, then the client retries in clear text.
        try Data(
            """
            import os, ssl, sys, urllib.request
            proxy = os.environ["HTTPS_PROXY"]
            context = ssl.create_default_context(cafile=sys.argv[3])
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": proxy, "http": proxy}),
                                                 urllib.request.HTTPSHandler(context=context))
            try:
                opener.open(sys.argv[1], timeout=10)
                sys.exit("the forged certificate was accepted")
            except urllib.error.URLError:
                pass
            opener.open(sys.argv[2], timeout=10).read()
            """.utf8
        ).write(to: URL(fileURLWithPath: script))
        let report = directory + "/report.json"
        let events = directory + "/events.jsonl"
        let result = try await runProxy(
            ["--report", report, "--events", events],
            command: [
                "python3", script, "https://api.origin.test:\(secure.port)/hello",
                "http://api.origin.test:\(clear.port)/hello", pki.root,
            ])
        #expect(result.status == 0, "\(result)")
        let message =
            "refused https://api.origin.test:\(secure.port), then fetched http://api.origin.test:\(clear.port)/hello in clear text (client 127.0.0.1)"
        #expect(result.stderrText.contains("WARNING fallback: \(message)"), "\(result)")
        let saved = try VerdictReport.decode(try Data(contentsOf: URL(fileURLWithPath: report)))
        let host = try #require(saved.hosts.first { $0.host == "api.origin.test" })
        #expect(host.fallbacks.map(\.request) == ["GET http://api.origin.test:\(clear.port)/hello"])
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains(#""type":"fallback""#) && $0.contains(message) }, "\(lines)")
        await secure.stop()
        await clear.stop()
    }

    @Test func aReportOnlyPinFailureReportIsAttachedToItsHost() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let directory = try TemporaryDirectory.make("pin-report")
        let body = directory + "/trustkit.json"
        try Data(
            """
            {"app-bundle-id":"com.example.app","app-version":"1.0","trustkit-version":"1.7.0","hostname":"www.origin.test",
             "port":\(origin.port),"noted-hostname":"www.origin.test","include-subdomains":false,"enforce-pinning":false,
             "validated-certificate-chain":["-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"],
             "known-pins":["pin-sha256=\\"\(Self.backupPin)\\""],"validation-result":1}
            """.utf8
        ).write(to: URL(fileURLWithPath: body))
        let report = directory + "/report.json"
        let result = try await runProxy(
            ["--report", report],
            command: [
                "/bin/sh", "-c",
                """
                curl -sS --max-time 10 -o /dev/null https://www.origin.test:\(origin.port)/hello || exit 7
                curl -sS --max-time 10 -o /dev/null -H 'Content-Type: application/json' --data-binary @\(body) \
                     https://reports.origin.test:\(origin.port)/digest || exit 8
                """,
            ])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderrText.contains(
                "WARNING pin-failure report for www.origin.test (connecting to www.origin.test:\(origin.port)) by com.example.app, "
                    + "posted to https://reports.origin.test:\(origin.port)/digest: 1 known pin, a chain of 1; enforce-pinning false: the app only reports "
                    + "and connects anyway; report-only pinning is not pinning"), "\(result)")
        let saved = try VerdictReport.decode(try Data(contentsOf: URL(fileURLWithPath: report)))
        let host = try #require(saved.hosts.first { $0.host == "www.origin.test" })
        #expect(host.pinFailureReports.map(\.enforcePinning) == [false])
        #expect(saved.hosts.first { $0.host == "reports.origin.test" }?.pinFailureReports.isEmpty == true)
        await origin.stop()
    }

    private func originPin() async throws -> String {
        let pki = try await TestPKI.shared()
        let result = try await Subprocess.run(
            "/bin/sh",
            [
                "-c",
                """
                openssl x509 -in \(pki.certificate(.origin)) -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64
                """,
            ])
        return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
