import Foundation
import TestSupport

/// `openssl verify` run on certificates written to a temporary directory: what a strict OpenSSL client concludes.
struct OpenSSLVerify {
    /// Exit status 0 and `OK` printed.
    var passed: Bool
    /// The numeric verify error codes printed (`error 10 at 0 depth lookup: certificate has expired`).
    var errors: [Int]
    /// Everything printed.
    var output: String

    /// Verifies `leafPEM` (with `untrustedPEM` as candidate intermediates) against `trustedPEM`, strictly, as a server
    /// certificate for `host`.
    /// `purpose` nil checks no purpose (every certificate's own fitness for the chain is still checked).
    static func run(
        leafPEM: String, untrustedPEM: String?, trustedPEM: String, host: String,
        purpose: String? = "sslserver"
    ) async throws -> OpenSSLVerify {
        let directory = try TemporaryDirectory("verify")
        var arguments = [
            "verify", "-show_chain", "-x509_strict", "-verify_hostname", host,
            "-CAfile", try directory.write("ca.pem", trustedPEM),
        ]
        if let purpose { arguments += ["-purpose", purpose] }
        if let untrustedPEM {
            arguments += ["-untrusted", try directory.write("chain.pem", untrustedPEM)]
        }
        arguments.append(try directory.write("leaf.pem", leafPEM))
        let result = try await Subprocess.run("openssl", arguments)
        withExtendedLifetime(directory) {}
        let output = result.stdoutText + result.stderrText
        let errors = output.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "error ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return OpenSSLVerify(passed: result.succeeded && output.contains(": OK"), errors: errors, output: output)
    }
}
