import Foundation
import MITMCore
import TestSupport
import Testing

@testable import MITMTLS

/// Each profile's certificate through `openssl verify -x509_strict -purpose sslserver -verify_hostname`, trusting the
/// proxy CA: `trusted` and `key:FILE` pass, every invalid profile fails with exactly the error it names.
@Suite(.tags(.live), .skippedInFastTier) struct CertificateProfileTests {
    private static let host = "api.bank.test"

    private func forger(keyFiles: [String] = []) throws -> CertificateProfileForger {
        let authority = try CertificateAuthority.loadOrCreate(directory: TemporaryDirectory.path("profiles"))
        return try CertificateProfileForger(trusted: try LeafForger(authority: authority), keyFiles: keyFiles)
    }

    private func verify(_ profile: CertificateProfile, with forger: CertificateProfileForger) async throws
        -> OpenSSLVerify
    {
        let identity = try forger.identity(for: profile, names: [.dns(Self.host)])
        // Installing the key next to the certificate fails when they do not match.
        _ = try TLSConnection(
            server: try ServerTLSContext(), certificate: identity.certificate, key: identity.key,
            chain: identity.chain, alpn: [], host: Self.host)
        return try await OpenSSLVerify.run(
            leafPEM: identity.certificate.pem,
            untrustedPEM: identity.chain.isEmpty ? nil : identity.chain.map(\.pem).joined(),
            trustedPEM: forger.trusted.authority.certificate.pem, host: Self.host)
    }

    @Test func trustedPassesStrictVerification() async throws {
        let result = try await verify(.trusted, with: try forger())
        #expect(result.passed, "\(result.output)")
    }

    @Test(arguments: [
        (CertificateProfile.untrustedRoot, 20),  // unable to get local issuer certificate
        (.selfSigned, 18),  // self-signed certificate
        (.wrongHost, 62),  // hostname mismatch
        (.expired, 10),  // certificate has expired
        (.notYetValid, 9),  // certificate is not yet valid
        (.sameNameCA, 7),  // certificate signature failure
        (.noServerAuth, 26),  // unsupported certificate purpose
    ])
    func invalidProfileFailsForItsOwnReasonOnly(profile: CertificateProfile, error: Int) async throws {
        let result = try await verify(profile, with: try forger())
        #expect(!result.passed)
        #expect(result.errors == [error], "\(profile): \(result.output)")
    }

    @Test func leafAsCAFailsBecauseItsIssuerIsNoCAAndForNothingElse() async throws {
        let forger = try forger()
        let identity = try forger.identity(for: .leafAsCA, names: [.dns(Self.host)])
        let verify = { (purpose: String?) in
            try await OpenSSLVerify.run(
                leafPEM: identity.certificate.pem, untrustedPEM: identity.chain.map(\.pem).joined(),
                trustedPEM: forger.trusted.authority.certificate.pem, host: Self.host, purpose: purpose)
        }
        // 79 invalid CA certificate, at the intermediate (depth 1): never 25, path length constraint exceeded, from
        // the proxy CA's pathlen:0, and nothing about the leaf (depth 0) or the CA (depth 2).
        let plain = try await verify(nil)
        #expect(!plain.passed && plain.errors == [79], "\(plain.output)")
        #expect(plain.output.contains("error 79 at 1 depth"), "\(plain.output)")
        // With the server purpose, the same fact is seen once more by the purpose check of an issuer (26).
        let server = try await verify("sslserver")
        #expect(!server.passed && server.errors == [79, 26], "\(server.output)")
        #expect(!server.output.contains("at 0 depth") && !server.output.contains("at 2 depth"), "\(server.output)")
    }

    @Test func eachInvalidProfileDiffersFromTheTrustedLeafOnlyWhereItMust() throws {
        let forger = try forger()
        let trusted = try forger.identity(for: .trusted, names: [.dns(Self.host)]).certificate
        for profile in CertificateProfile.plain where profile.isInvalid && profile != .wrongHost {
            let certificate = try forger.identity(for: profile, names: [.dns(Self.host)]).certificate
            #expect(certificate.subjectAlternativeNames == trusted.subjectAlternativeNames, "\(profile)")
            #expect(certificate.spkiSHA256Base64 == trusted.spkiSHA256Base64, "\(profile)")
        }
        let sameName = try forger.identity(for: .sameNameCA, names: [.dns(Self.host)]).certificate
        #expect(sameName.issuer == trusted.issuer)
    }

    @Test func keyFileProfileCarriesThatKeyAndPasses() async throws {
        let path = TemporaryDirectory.path("next-key") + ".pem"
        let key = try PrivateKey.generateP256()
        try Data(try key.pkcs8PEM()).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let forger = try forger(keyFiles: [path])
        let identity = try forger.identity(for: .key(path: path), names: [.dns(Self.host)])
        #expect(identity.pin == SHA256Digest.base64(try key.subjectPublicKeyInfoDER()))
        #expect(identity.pin != forger.trusted.leafPin)
        let result = try await verify(.key(path: path), with: forger)
        #expect(result.passed, "\(result.output)")
    }

    @Test func anUnusableKeyFileIsAClearError() throws {
        let missing = TemporaryDirectory.path("absent") + ".pem"
        #expect(throws: CertificateProfileSetupError.self) { try self.forger(keyFiles: [missing]) }
        let garbage = TemporaryDirectory.path("garbage") + ".pem"
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: garbage))
        defer { unlink(garbage) }
        do {
            _ = try forger(keyFiles: [garbage])
            Issue.record("a garbage key file was accepted")
        } catch let error as CertificateProfileSetupError {
            #expect(error.description.contains("not an unencrypted PEM private key"))
        }
    }

    @Test func leavesAreCachedPerProfileAndNames() throws {
        let forger = try forger()
        let first = try forger.identity(for: .expired, names: [.dns(Self.host)]).certificate
        #expect(first.isSame(as: try forger.identity(for: .expired, names: [.dns(Self.host)]).certificate))
        #expect(!first.isSame(as: try forger.identity(for: .notYetValid, names: [.dns(Self.host)]).certificate))
        #expect(!first.isSame(as: try forger.identity(for: .expired, names: [.dns("other.test")]).certificate))
    }

    @Test func throwawayKeysAreNeverWrittenNextToTheCA() throws {
        let directory = TemporaryDirectory.path("ca-only")
        let authority = try CertificateAuthority.loadOrCreate(directory: directory)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        let forger = try CertificateProfileForger(trusted: try LeafForger(authority: authority))
        for profile in CertificateProfile.plain { _ = try forger.identity(for: profile, names: [.dns(Self.host)]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == before)
    }
}
