import Foundation
import MITMCore
import MITMProxy
import MITMTLS
import Testing

/// What the proxy tells a person at the end and as it goes.
@Suite(.tags(.live), .skippedInFastTier) struct AccountTests {
    @Test func anUpstreamThatFailedIsShownBesideTheVerdict() async throws {
        let origin = try await OriginServer.start(.tls(.untrusted))
        let harness = try await ProxyHarness.start { $0.resolveOverrides = ["untrusted.test": "127.0.0.1"] }
        defer { harness.stop() }
        for _ in 0..<2 {
            let result = try await Curl.run(
                through: harness,
                ["-o", "/dev/null", "-w", "%{http_code}", "https://untrusted.test:\(origin.port)/hello"])
            #expect(result.stdoutText == "502", "\(result)")
        }
        #expect(await harness.server.settleVerdicts(timeout: .seconds(10)))
        #expect(await Poll.until { harness.server.hostVerdicts.first?.upstream?.answeredWith502 == 2 })
        let table = VerdictText.table(harness.server.hostVerdicts, expectations: [])
        #expect(
            table.contains(
                "untrusted.test  intercepted   2 intercepted; every request answered 502: its certificate is not trusted"
            ), "\(table)")
        await origin.stop()
    }

    @Test func mixedResultsAndPortsAreCountedApart() async throws {
        let pki = try await TestPKI.shared()
        let first = try await OriginServer.start(.tls(.origin))
        let second = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.resolveOverrides = ["mix.origin.test": "127.0.0.1"]
            $0.silenceWindow = .milliseconds(300)
        }
        defer { harness.stop() }
        let url = "https://mix.origin.test:\(first.port)/hello"
        let pin = try pinOfOrigin(pki)
        for _ in 0..<2 { _ = try await Curl.run(through: harness, ["--pinnedpubkey", "sha256//\(pin)", url]) }
        #expect(
            await harness.server.settleVerdicts(timeout: .seconds(10)), "refusals ruled before anything is intercepted")
        _ = try await Curl.run(through: harness, trustingProxyCA: false, ["--cacert", pki.root, url])
        for _ in 0..<3 { #expect(try await Curl.run(through: harness, [url]).succeeded) }
        #expect(
            try await Curl.run(
                through: harness, trustingProxyCA: false,
                ["--cacert", pki.root, "https://mix.origin.test:\(second.port)/hello"]
            ).status == 60)
        #expect(await harness.server.settleVerdicts(timeout: .seconds(10)))
        let table = VerdictText.table(harness.server.hostVerdicts, expectations: [])
        let firstRow = "mix.origin.test:\(first.port)"
        #expect(
            table.contains(
                "\(firstRow)  intercepted   3 refused (closed-after-handshake 2, alert unknown_ca 1), 3 intercepted"),
            "\(table)")
        #expect(
            table.contains("mix.origin.test:\(second.port)  refused       1 refused (alert unknown_ca 1)"), "\(table)")
        await first.stop()
        await second.stop()
    }

    @Test func consoleLinesCarryTimeConnectionAndProtocol() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let proxy = try await ProxyProcess.start(["-v", "--resolve", "control.test:127.0.0.1"])
        let result = try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "10", "--proxy", "http://127.0.0.1:\(proxy.port)",
                "--cacert", proxy.caDirectory + "/ca.pem", "--http1.1",
                "https://control.test:\(origin.port)/hello",
            ])
        #expect(result.succeeded, "\(result)")
        #expect(await Poll.until { proxy.outputText.contains("INTERCEPTED") })
        let output = proxy.outputText
        let request = try #require(
            output.split(separator: "\n").first { $0.contains("GET https://control.test") }, "\(output)")
        #expect(
            request.wholeMatch(
                of: /\d\d:\d\d:\d\d\.\d{3} #\d+ GET https:\/\/control\.test:\d+\/hello \(http\/1\.1\) -> 200, .*/)
                != nil,
            "\(request)")
        #expect(
            output.contains("handshake completed (TLSv1.3, http/1.1); waiting for the client's first request"),
            "\(output)")
        #expect(
            !output.contains(": intercepted (TLS"), "-v no longer calls a bare handshake an interception: \(output)")
        #expect(
            VerdictText.explanation(Verdict(kind: .refused, reason: .closedInHandshake)).contains(
                "or the proxy's CA is not installed"))
        await proxy.stop()
        await origin.stop()
    }

    @Test func theReportKeepsABoundedWindowOfConnectionsAndCountsThemAll() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let harness = try await ProxyHarness.start {
            $0.resolveOverrides = ["many.origin.test": "127.0.0.1"]
            $0.connectionDetailLimit = 20
        }
        defer { harness.stop() }
        let python = """
            import sys, proxyclient
            for _ in range(60):
                s = proxyclient.tls_tunnel(\(harness.port), "many.origin.test", \(origin.port), sys.argv[1])
                s.sendall(proxyclient.request("GET", "/hello", host="many.origin.test"))
                proxyclient.Reader(s).response()
                s.close()
            """
        let result = try await PythonClient.run(python, [harness.caCertificate])
        #expect(result.succeeded, "\(result)")
        #expect(await harness.server.settleVerdicts(timeout: .seconds(10)))
        let report = VerdictReport(
            final: true, listen: "-", caCertificate: "-", silenceWindowSeconds: 3, ledger: harness.server.ledger,
            expectations: [])
        #expect(report.connections.count == 20)
        #expect(report.connectionsOmitted == 40)
        #expect(report.hosts.first?.attempts == 60)
        await origin.stop()
    }

    private func pinOfOrigin(_ pki: TestPKI) throws -> String {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.certificate(.origin))))
        return try X509Certificate.certificates(inFileBytes: bytes)[0].spkiSHA256Base64
    }
}
