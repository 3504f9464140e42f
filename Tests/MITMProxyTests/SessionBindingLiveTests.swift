import Foundation
import MITMCore
import Testing

/// `openssl s_client -sess_out` through the proxy to one host, then `-sess_in` with that session: the same host resumes,
/// another host (and an IP literal without SNI) gets a full handshake with its own certificate, so its verdict rests on
/// a certificate it was shown; the resumed connection's verdict says it was resumed.
@Suite(.tags(.live), .skippedInFastTier) struct SessionBindingLiveTests {
    @Test(arguments: ["-tls1_3", "-tls1_2"])
    func aSessionOfOneHostResumesOnThatHostOnly(version: String) async throws {
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["a.origin.test": "127.0.0.1", "b.origin.test": "127.0.0.1"]
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let directory = try TemporaryDirectory.make("sessions")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saved = directory + "/a.pem"
        let get = { (host: String, options: [String]) in
            let request = "GET /hello HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
            let naming = HostName.isIPAddress(host) ? ["-noservername"] : ["-servername", host]
            return try await OpenSSLClient.connect(
                through: proxy, to: host, port: origin.port,
                [version, "-ign_eof", "-CAfile", proxy.caCertificate] + naming + options,
                stdin: Array(request.utf8))
        }

        // A first contact's certificate is forged from the SNI alone, and the next one carries the upstream's names
        // too: sessions resume from the second connection on.
        let firstContact = try await get("a.origin.test", [])
        #expect(firstContact.text.contains("New, ") && firstContact.verified, "\(firstContact.text)")
        let first = try await get("a.origin.test", ["-sess_out", saved])
        #expect(first.text.contains("New, ") && first.text.contains("hello from origin"), "\(first.text)")
        let same = try await get("a.origin.test", ["-sess_in", saved])
        #expect(same.text.contains("Reused, ") && same.text.contains("hello from origin"), "\(same.text)")
        let other = try await get("b.origin.test", ["-sess_in", saved])
        #expect(other.text.contains("New, ") && other.verified, "\(other.text)")
        let otherLeaf = try #require(other.leafPEM, "\(other.text)")
        let described = try await OpenSSLClient.describe(otherLeaf)
        #expect(described.contains("Subject: O = mitm-proxy, CN = b.origin.test"), "\(described)")
        let literal = try await get("127.0.0.1", ["-sess_in", saved])
        #expect(literal.text.contains("New, ") && literal.verified, "\(literal.text)")

        var verdicts: [ConnectionVerdict] = []
        let decided = await Poll.until {
            verdicts = proxy.events.compactMap { if case .verdict(let record) = $0 { record } else { nil } }
            return verdicts.count == 5
        }
        #expect(decided, "\(verdicts)")
        let seen = verdicts.sorted { $0.connectionID < $1.connectionID }.map {
            "\($0.host) \($0.verdict.kind.rawValue) \($0.verdict.resumed == true ? "resumed" : "full")"
        }
        #expect(
            seen == [
                "a.origin.test intercepted full", "a.origin.test intercepted full", "a.origin.test intercepted resumed",
                "b.origin.test intercepted full", "127.0.0.1 intercepted full",
            ])
        let resumed = verdicts.first { $0.verdict.resumed == true }
        #expect(resumed?.verdict.detail == Verdict.resumedSessionDetail)
        #expect(resumed.map { EventLine(.verdict($0)).json() }?.contains("\"resumed\":true") == true)
        let line = resumed.map(VerdictText.line) ?? ""
        #expect(
            line.contains("resumed session) by ") && line.contains(" -- the client resumed the TLS session"), "\(line)")
        await origin.stop()
    }
}
