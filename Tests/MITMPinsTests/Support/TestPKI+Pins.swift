import Foundation

/// The leaves the pin tests read, issued once per test run by the shared test PKI's intermediate: `leaf.test`,
/// `other.test` (served for SNI other.test), `expiring.test` (10 days), and one leaf per key type (RSA-2048, RSA-4096,
/// P-256, P-384). Each comes as `stem.pem`, `stem-key.pem` and `stem-chain.pem` (with the intermediate, as served);
/// `chain.pem` is leaf.test's whole chain up to the root.
extension TestPKI {
    /// The key types the pin tests cover, by file stem.
    static let keyTypes: [(stem: String, key: KeyType)] = [
        ("rsa2048", .rsa(bits: 2048)), ("rsa4096", .rsa(bits: 4096)), ("p256", .ec(curve: "P-256")),
        ("p384", .ec(curve: "P-384")),
    ]

    /// The shared PKI with the pin tests' leaves issued.
    static func withPinLeaves() async throws -> TestPKI {
        try await pinLeaves.value
    }

    private static let pinLeaves = Task<TestPKI, any Error> {
        let pki = try await TestPKI.shared()
        try await pki.issueLeaf("leaf", host: "leaf.test", key: .ec(curve: "P-256"), days: 365)
        try await pki.issueLeaf("other", host: "other.test", key: .ec(curve: "P-256"), days: 365)
        try await pki.issueLeaf("expiring", host: "expiring.test", key: .ec(curve: "P-256"), days: 10)
        for (stem, key) in keyTypes {
            try await pki.issueLeaf(stem, host: "\(stem).test", key: key, days: 365)
        }
        try pki.concatenate(["leaf.pem", "intermediate.pem", "root.pem"], into: "chain.pem")
        try await pki.openssl(["x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der"])
        try await pki.openssl(["x509", "-in", "rsa4096.pem", "-outform", "DER", "-out", "rsa4096.der"])
        return pki
    }

    /// The pin of a certificate file as the openssl pipeline computes it.
    func opensslPin(_ name: String, inform: String = "PEM") async throws -> String {
        try await pipeline(
            "openssl x509 -inform \(inform) -in '\(path(name))' -pubkey -noout | openssl pkey -pubin -outform der"
                + " | openssl dgst -sha256 -binary | base64"
        ).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The DER SubjectPublicKeyInfo of a certificate file, from openssl.
    func opensslSubjectPublicKeyInfo(_ name: String) async throws -> [UInt8] {
        try await pipeline("openssl x509 -in '\(path(name))' -pubkey -noout | openssl pkey -pubin -outform der").stdout
    }

    /// The SHA-256 (base64) of an RSA certificate's PKCS#1 RSAPublicKey, from openssl.
    func opensslRSAPublicKeyHash(_ name: String) async throws -> String {
        try await pipeline(
            "openssl x509 -in '\(path(name))' -pubkey -noout | openssl rsa -pubin -RSAPublicKey_out -outform DER"
                + " 2>/dev/null | openssl dgst -sha256 -binary | base64"
        )
        .stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func pipeline(_ command: String) async throws -> SubprocessResult {
        let result = try await Subprocess.run("bash", ["-c", "set -o pipefail; " + command])
        guard result.succeeded else { throw TestFailure("\(command) failed: \(result)") }
        return result
    }
}

/// A failure in test setup, with its reason.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
