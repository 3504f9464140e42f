/// SHA-256 computed by the `openssl` command, an implementation independent of the code under test.
enum OpenSSLDigest {
    /// The lowercase hex SHA-256 of `bytes`.
    static func sha256Hex(_ bytes: [UInt8]) async throws -> String {
        let result = try await Subprocess.run("openssl", ["dgst", "-sha256", "-r"], stdin: bytes)
        guard result.succeeded, let digest = result.stdoutText.split(separator: " ").first, digest.count == 64 else {
            throw SubprocessError(description: "openssl dgst failed: \(result.stderrText)")
        }
        return String(digest)
    }
}
