import Foundation

/// `openssl s_client` through the proxy's CONNECT, and `openssl verify` on what it was shown.
enum OpenSSLClient {
    /// What one `s_client` run printed.
    struct Session {
        /// stdout and stderr together.
        let text: String
        /// The first certificate of `-showcerts` (the leaf), PEM.
        var leafPEM: String? {
            guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
                let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex)
            else { return nil }
            return String(text[begin.lowerBound..<end.upperBound]) + "\n"
        }
        /// `ALPN protocol: X`, or nil for `No ALPN negotiated`.
        var alpn: String? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ALPN protocol: ") }) else {
                return nil
            }
            return String(line.dropFirst("ALPN protocol: ".count))
        }
        /// `Verify return code: 0 (ok)` was printed.
        var verified: Bool { text.contains("Verify return code: 0 (ok)") }
    }

    /// `s_client -proxy 127.0.0.1:P -connect host:port -showcerts` plus `options`, with `stdin` (by default closed at once).
    static func connect(
        through proxy: ProxyHarness, to host: String, port: UInt16, _ options: [String],
        stdin: [UInt8] = []
    ) async throws -> Session {
        let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let result = try await Subprocess.run(
            "openssl",
            [
                "s_client", "-proxy", "127.0.0.1:\(proxy.port)", "-connect", target, "-showcerts",
            ] + options, stdin: stdin, timeout: .seconds(20))
        return Session(text: result.stdoutText + result.stderrText)
    }

    /// `openssl verify -x509_strict -purpose sslserver -CAfile ca` plus `checks` on `leafPEM`.
    static func verifyStrictly(_ leafPEM: String, caFile: String, _ checks: [String]) async throws -> SubprocessResult {
        let file = TemporaryDirectory.path("leaf") + ".pem"
        try leafPEM.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try await Subprocess.run(
            "openssl", ["verify", "-x509_strict", "-purpose", "sslserver"] + checks + ["-CAfile", caFile, file])
    }

    /// The text form of a PEM certificate (`openssl x509 -noout -text`).
    static func describe(_ pem: String) async throws -> String {
        try await Subprocess.run("openssl", ["x509", "-noout", "-text"], stdin: Array(pem.utf8)).stdoutText
    }
}
