import Foundation

/// Certificates made with the `openssl` CLI once per test run, in a temporary directory.
///
/// A root (RSA-2048) signs an intermediate (P-256), which signs the leaves: `leaf.test` (P-256),
/// `other.test` (P-256, served for SNI other.test), `expiring.test` (P-256, 10 days), and one leaf
/// per key type (RSA-2048, RSA-4096, P-256, P-384).
final class TestPKI: Sendable {
    let directory: TemporaryDirectory

    /// The shared PKI, made on first use.
    static func shared() throws -> TestPKI {
        try sharedResult.get()
    }

    private static let sharedResult = Result { try TestPKI() }

    /// The key types the pin tests cover, by file stem.
    static let keyTypes: [(stem: String, algorithm: String)] = [
        ("rsa2048", "rsa:2048"), ("rsa4096", "rsa:4096"), ("p256", "ec:P-256"), ("p384", "ec:P-384"),
    ]

    /// `directory/name`.
    func path(_ name: String) -> String { directory.file(name) }

    private init() throws {
        directory = try TemporaryDirectory()
        try openssl("req -x509 -newkey rsa:2048 -nodes -keyout root.key -out root.pem -days 3650 -subj /O=mitm-proxy-tests/CN=Pins-Test-Root")
        try write("ca.ext", "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n")
        try newKey("intermediate", "ec:P-256")
        try openssl("req -new -key intermediate.key -out intermediate.csr -subj /O=mitm-proxy-tests/CN=Pins-Test-Intermediate")
        try openssl("x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -CAcreateserial -days 1825 -extfile ca.ext -out intermediate.pem")
        try leaf("leaf", host: "leaf.test", key: "ec:P-256", days: 365)
        try leaf("other", host: "other.test", key: "ec:P-256", days: 365)
        try leaf("expiring", host: "expiring.test", key: "ec:P-256", days: 10)
        for (stem, key) in Self.keyTypes {
            try leaf(stem, host: "\(stem).test", key: key, days: 365)
        }
        for stem in ["leaf", "other", "expiring"] {
            try concatenate(["\(stem).pem", "intermediate.pem"], into: "\(stem)-served.pem")
        }
        try concatenate(["leaf.pem", "intermediate.pem", "root.pem"], into: "chain.pem")
        try openssl("x509 -in leaf.pem -outform DER -out leaf.der")
        try openssl("x509 -in rsa4096.pem -outform DER -out rsa4096.der")
    }

    private func newKey(_ stem: String, _ spec: String) throws {
        let parts = spec.split(separator: ":")
        if parts[0] == "rsa" {
            try openssl("genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:\(parts[1]) -out \(stem).key")
        } else {
            try openssl("genpkey -algorithm EC -pkeyopt ec_paramgen_curve:\(parts[1]) -out \(stem).key")
        }
    }

    private func leaf(_ stem: String, host: String, key: String, days: Int) throws {
        try newKey(stem, key)
        try write("\(stem).ext", "basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:\(host)\nextendedKeyUsage=serverAuth\n")
        try openssl("req -new -key \(stem).key -out \(stem).csr -subj /O=mitm-proxy-tests/CN=\(host)")
        try openssl("x509 -req -in \(stem).csr -CA intermediate.pem -CAkey intermediate.key -CAcreateserial -days \(days) -extfile \(stem).ext -out \(stem).pem")
    }

    private func write(_ name: String, _ text: String) throws {
        try directory.write(name, text)
    }

    private func concatenate(_ names: [String], into target: String) throws {
        let data = try names.reduce(into: Data()) { $0 += try Data(contentsOf: URL(fileURLWithPath: path($1))) }
        try directory.write(target, data)
    }

    private func openssl(_ arguments: String) throws {
        let result = try Subprocess.shell("cd '\(directory.path)' && openssl \(arguments)")
        guard result.status == 0 else { throw TestFailure("openssl \(arguments) failed: \(result.standardError)") }
    }

    /// The pin of a certificate file as the openssl pipeline computes it.
    func opensslPin(_ name: String, inform: String = "PEM") throws -> String {
        let result = try Subprocess.shell(
            "openssl x509 -inform \(inform) -in '\(path(name))' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
        )
        guard result.status == 0 else { throw TestFailure("openssl pin pipeline failed: \(result.standardError)") }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The DER SubjectPublicKeyInfo of a certificate file, from openssl.
    func opensslSubjectPublicKeyInfo(_ name: String) throws -> [UInt8] {
        let result = try Subprocess.shell("openssl x509 -in '\(path(name))' -pubkey -noout | openssl pkey -pubin -outform der")
        guard result.status == 0 else { throw TestFailure("openssl pkey failed: \(result.standardError)") }
        return Array(result.standardOutput)
    }

    /// The SHA-256 (base64) of an RSA certificate's PKCS#1 RSAPublicKey, from openssl.
    func opensslRSAPublicKeyHash(_ name: String) throws -> String {
        let result = try Subprocess.shell(
            "openssl x509 -in '\(path(name))' -pubkey -noout | openssl rsa -pubin -RSAPublicKey_out -outform DER 2>/dev/null | openssl dgst -sha256 -binary | base64"
        )
        guard result.status == 0 else { throw TestFailure("openssl rsa failed: \(result.standardError)") }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A failure in test setup, with its reason.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
