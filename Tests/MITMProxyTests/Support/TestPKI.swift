import Foundation

/// The throwaway PKI from `certs/make-test-pki.sh`, generated once per test process into a temporary directory.
struct TestPKI: Sendable {
    /// The leaf certificates the PKI issues.
    enum Leaf: String, Sendable, CaseIterable {
        /// EC P-256 leaf for localhost, origin.test, *.origin.test, pinned.test, control.test, 127.0.0.1 and ::1.
        case origin = "origin"
        /// The same names with an RSA-2048 key.
        case originRSA = "origin-rsa"
        /// A self-signed leaf for untrusted.test, localhost and 127.0.0.1 that no test root vouches for.
        case untrusted = "untrusted"
    }

    /// The directory holding the PEM files.
    let directory: String

    /// The test root CA certificate, the CA file clients should trust.
    var root: String { file("root.pem") }
    /// The root CA's private key.
    var rootKey: String { file("root-key.pem") }
    /// The intermediate CA certificate that signs the origin leaves.
    var intermediate: String { file("intermediate.pem") }
    /// The intermediate CA's private key.
    var intermediateKey: String { file("intermediate-key.pem") }

    /// The leaf certificate alone.
    func certificate(_ leaf: Leaf) -> String { file("\(leaf.rawValue).pem") }
    /// The leaf followed by its intermediate (just the leaf for the self-signed one), for a server to send.
    func chain(_ leaf: Leaf) -> String { file("\(leaf.rawValue)-chain.pem") }
    /// The leaf's private key.
    func key(_ leaf: Leaf) -> String { file("\(leaf.rawValue)-key.pem") }

    /// The PKI for this test process, generated on first use.
    static func shared() async throws -> TestPKI {
        try await generation.value
    }

    private static let temporaryDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("mitm-proxy-test-pki-\(UUID().uuidString)").path

    private static let generation = Task<TestPKI, any Error> {
        let result = try await Subprocess.run("bash", [RepositoryLayout.testPKIScript, temporaryDirectory])
        atexit { try? FileManager.default.removeItem(atPath: TestPKI.temporaryDirectory) }
        guard result.succeeded else {
            throw SubprocessError(description: "make-test-pki.sh failed (\(result.status)): \(result.stderrText)")
        }
        return TestPKI(directory: temporaryDirectory)
    }

    private func file(_ name: String) -> String {
        directory + "/" + name
    }
}
