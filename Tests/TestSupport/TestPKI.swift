import Foundation

/// The throwaway PKI from `certs/make-test-pki.sh` (an EC root, the intermediate it signs, and the origin leaves),
/// generated once per test process into a temporary directory. Tests that need more leaves have them issued by the
/// same intermediate (`issueLeaf`), so every test trusts one root.
public struct TestPKI: Sendable {
    /// The leaf certificates the script issues.
    public enum Leaf: String, Sendable, CaseIterable {
        /// EC P-256 leaf for localhost, origin.test, *.origin.test, pinned.test, control.test, 127.0.0.1 and ::1.
        case origin = "origin"
        /// The same names with an RSA-2048 key.
        case originRSA = "origin-rsa"
        /// A self-signed leaf for untrusted.test, localhost and 127.0.0.1 that no test root vouches for.
        case untrusted = "untrusted"
    }

    /// The directory holding the PEM files.
    public let directory: String

    /// The test root CA certificate, the CA file clients should trust.
    public var root: String { path("root.pem") }
    /// The root CA's private key.
    public var rootKey: String { path("root-key.pem") }
    /// The intermediate CA certificate that signs the leaves.
    public var intermediate: String { path("intermediate.pem") }
    /// The intermediate CA's private key.
    public var intermediateKey: String { path("intermediate-key.pem") }

    /// The leaf certificate alone.
    public func certificate(_ leaf: Leaf) -> String { path("\(leaf.rawValue).pem") }
    /// The leaf followed by its intermediate (just the leaf for the self-signed one), for a server to send.
    public func chain(_ leaf: Leaf) -> String { path("\(leaf.rawValue)-chain.pem") }
    /// The leaf's private key.
    public func key(_ leaf: Leaf) -> String { path("\(leaf.rawValue)-key.pem") }

    /// `directory/name`.
    public func path(_ name: String) -> String { directory + "/" + name }

    /// The PKI for this test process, generated on first use (openssl runs on a thread of its own).
    public static func shared() async throws -> TestPKI {
        try await generation.value
    }

    private static let sharedDirectory = TemporaryDirectory.path("test-pki")

    private static let generation = Task<TestPKI, any Error> {
        let result = try await Subprocess.run("bash", [script, sharedDirectory], timeout: .seconds(120))
        atexit { try? FileManager.default.removeItem(atPath: TestPKI.sharedDirectory) }
        guard result.succeeded else {
            throw SubprocessError(description: "make-test-pki.sh failed: \(result)")
        }
        return TestPKI(directory: sharedDirectory)
    }

    /// `certs/make-test-pki.sh`, found from this file's place: `Tests/TestSupport/TestPKI.swift`.
    private static let script: String = {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)
        return components.joined(separator: "/") + "/certs/make-test-pki.sh"
    }()

    /// A key algorithm for `issueLeaf`, as `openssl genpkey` names it.
    public enum KeyType: Sendable {
        case rsa(bits: Int)
        case ec(curve: String)
    }

    /// Issues a server certificate for `host` from the intermediate, valid for `days`: writes `stem.pem`,
    /// `stem-key.pem` and `stem-chain.pem` (the leaf and the intermediate, as a server sends them).
    public func issueLeaf(_ stem: String, host: String, key: KeyType, days: Int) async throws {
        switch key {
        case .rsa(let bits):
            // A 4096-bit key takes seconds on a quiet machine and can take minutes beside a whole parallel test run.
            try await openssl(
                ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", "\(stem)-key.pem"],
                timeout: .seconds(600))
        case .ec(let curve):
            try await openssl([
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:\(curve)", "-out", "\(stem)-key.pem",
            ])
        }
        let extensions = "basicConstraints=critical,CA:FALSE\nsubjectAltName=DNS:\(host)\nextendedKeyUsage=serverAuth\n"
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: path("\(stem).ext")))
        try await openssl([
            "req", "-new", "-key", "\(stem)-key.pem", "-out", "\(stem).csr", "-subj", "/O=mitm-proxy tests/CN=\(host)",
        ])
        try await openssl([
            "x509", "-req", "-in", "\(stem).csr", "-CA", "intermediate.pem", "-CAkey", "intermediate-key.pem",
            "-set_serial", "0x\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))", "-days", "\(days)",
            "-sha256", "-extfile", "\(stem).ext", "-out", "\(stem).pem",
        ])
        try concatenate(["\(stem).pem", "intermediate.pem"], into: "\(stem)-chain.pem")
    }

    /// Writes the files `names`, one after the other, to `target` in the directory.
    public func concatenate(_ names: [String], into target: String) throws {
        let data = try names.reduce(into: Data()) { $0 += try Data(contentsOf: URL(fileURLWithPath: path($1))) }
        try data.write(to: URL(fileURLWithPath: path(target)))
    }

    /// Runs `openssl arguments` in the directory; throws with its output when it fails.
    public func openssl(_ arguments: [String], timeout: Duration = .seconds(120)) async throws {
        let result = try await Subprocess.run(
            "/bin/sh", ["-c", "cd \"$0\" && exec openssl \"$@\"", directory] + arguments, timeout: timeout)
        guard result.succeeded else {
            throw SubprocessError(description: "openssl \(arguments.joined(separator: " ")) failed: \(result)")
        }
    }
}
