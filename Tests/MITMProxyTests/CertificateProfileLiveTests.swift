import Foundation
import MITMCore
import MITMProxy
import MITMTLS
import Testing

/// `--attack` with real curl: a client that validates refuses every invalid profile and accepts `trusted`; `curl -k`
/// accepts them, and the verdict says so in words, in the event and in the report; `key:FILE` satisfies a client pinned
/// to that key. Each host name is its own profile (`expired.test=expired`), all resolved to one origin.
@Suite(.tags(.live), .skippedInFastTier) struct CertificateProfileLiveTests {
    private static let invalid = CertificateProfile.plain.filter(\.isInvalid)

    private static func host(_ profile: CertificateProfile) -> String { "\(profile).test" }

    private func start(extraRules: [CertificateProfileRule] = [], hosts: [String]) async throws -> ProxyHarness {
        let rules = try Self.invalid.map {
            try CertificateProfileRule(pattern: HostPattern(Self.host($0)), profile: $0)
        }
        return try await ProxyHarness.start { configuration in
            configuration.tunnelPolicy = TunnelPolicy(profileRules: rules + extraRules)
            configuration.resolveOverrides = Dictionary(
                uniqueKeysWithValues: (hosts + Self.invalid.map(Self.host)).map { ($0, "127.0.0.1") })
            configuration.upstreamInsecure = true
            configuration.silenceWindow = .seconds(1)
        }
    }

    @Test func aValidatingClientRefusesEveryInvalidProfileAndAcceptsTrusted() async throws {
        let proxy = try await start(hosts: ["trusted.test"])
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        for profile in Self.invalid {
            let result = try await Curl.run(through: proxy, [origin.url("/hello", hostname: Self.host(profile))])
            #expect(!result.succeeded, "\(profile): curl accepted it: \(result)")
            let verdict = await proxy.server.waitForVerdict(host: Self.host(profile))
            #expect(verdict?.verdict == .refused, "\(profile): \(String(describing: verdict))")
            #expect(verdict?.profile == profile)
            #expect(verdict?.acceptedInvalidCertificate == false)
        }
        let trusted = try await Curl.run(through: proxy, [origin.url("/hello", hostname: "trusted.test")])
        #expect(trusted.stdoutText == "hello from origin", "\(trusted)")
        #expect(await proxy.server.waitForVerdict(host: "trusted.test")?.verdict == .intercepted)
    }

    @Test func pythonSSLRefusesEveryInvalidProfileForItsReason() async throws {
        let proxy = try await start(hosts: ["trusted.test"])
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import sys, ssl, proxyclient
            for host in sys.argv[3:]:
                try:
                    s = proxyclient.tls_tunnel(int(sys.argv[1]), host, int(sys.argv[2]), "\(proxy.caCertificate)")
                    print(host, "accepted")
                    s.close()
                except ssl.SSLCertVerificationError as error:
                    print(host, "refused", error.verify_code)
            """
        let hosts = ["trusted.test"] + Self.invalid.map(Self.host)
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)] + hosts)
        let lines = Dictionary(
            uniqueKeysWithValues: result.stdoutText.split(separator: "\n").map { line in
                let parts = line.split(separator: " ", maxSplits: 1)
                return (String(parts[0]), String(parts.count > 1 ? parts[1] : ""))
            })
        #expect(lines["trusted.test"] == "accepted", "\(result)")
        // Python's own verify codes (OpenSSL's), one per profile: the same single reason as `openssl verify`.
        let expected: [CertificateProfile: String] = [
            .untrustedRoot: "refused 20", .selfSigned: "refused 18", .wrongHost: "refused 62", .expired: "refused 10",
            .notYetValid: "refused 9", .sameNameCA: "refused 7", .leafAsCA: "refused 79", .noServerAuth: "refused 26",
        ]
        for profile in Self.invalid {
            #expect(lines[Self.host(profile)] == expected[profile], "\(profile): \(result)")
        }
    }

    @Test func anInsecureClientAcceptsInvalidCertificatesAndTheRunSaysSo() async throws {
        let proxy = try await start(hosts: [])
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        for profile in Self.invalid {
            let result = try await Curl.run(through: proxy, ["-k", origin.url("/hello", hostname: Self.host(profile))])
            #expect(result.stdoutText == "hello from origin", "\(profile): \(result)")
            let verdict = await proxy.server.waitForVerdict(host: Self.host(profile))
            #expect(verdict?.acceptedInvalidCertificate == true, "\(profile): \(String(describing: verdict))")
        }
        let expired = proxy.server.connectionVerdicts.first { $0.host == Self.host(.expired) }
        let line = try #require(expired.map(VerdictText.line))
        #expect(line.contains("[expired]: ACCEPTED AN INVALID CERTIFICATE"), "\(line)")
        #expect(line.contains("it expired yesterday"), "\(line)")
        let event = try #require(expired.map { EventLine(.verdict($0)) })
        #expect(event.profile == "expired")
        #expect(event.acceptedInvalidCertificate == true)
        let report = VerdictReport(
            final: true, listen: "", caCertificate: "", silenceWindowSeconds: 1,
            ledger: proxy.server.ledger, expectations: [])
        #expect(Set(report.findings.map(\.profile)) == Set(Self.invalid.map(\.description)))
        #expect(report.findings.allSatisfy { $0.severity == "critical" })
    }

    @Test func aClientPinnedToTheBackupKeyAcceptsTheKeyProfile() async throws {
        let directory = try TemporaryDirectory.make("backup-key")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyPath = "\(directory)/next.pem"
        let key = try PrivateKey.generateP256()
        try Data(try key.pkcs8PEM()).write(to: URL(fileURLWithPath: keyPath))
        let pin = SHA256Digest.base64(try key.subjectPublicKeyInfoDER())
        let rotated = try CertificateProfileRule(pattern: HostPattern("rotated.test"), profile: .key(path: keyPath))
        let proxy = try await start(extraRules: [rotated], hosts: ["rotated.test", "current.test"])
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let backupPinned = try await Curl.run(
            through: proxy, ["--pinnedpubkey", "sha256//\(pin)", origin.url("/hello", hostname: "rotated.test")])
        #expect(backupPinned.stdoutText == "hello from origin", "\(backupPinned)")
        #expect(await proxy.server.waitForVerdict(host: "rotated.test")?.verdict == .intercepted)
        let shown = proxy.server.connectionVerdicts.first { $0.host == "rotated.test" }
        #expect(shown?.shownCertificatePin == pin)
        // The same pin against the ordinary forged key: the pin check itself is what decides.
        let otherKey = try await Curl.run(
            through: proxy, ["--pinnedpubkey", "sha256//\(pin)", origin.url("/hello", hostname: "current.test")])
        #expect(!otherKey.succeeded, "\(otherKey)")
    }
}
