import Foundation

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
    static func run(leafPEM: String, untrustedPEM: String?, trustedPEM: String, host: String,
                    purpose: String? = "sslserver") throws -> OpenSSLVerify {
        let directory = temporaryPath("verify")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try trustedPEM.write(toFile: "\(directory)/ca.pem", atomically: true, encoding: .utf8)
        try leafPEM.write(toFile: "\(directory)/leaf.pem", atomically: true, encoding: .utf8)
        var arguments = ["verify", "-show_chain", "-x509_strict", "-verify_hostname", host, "-CAfile", "\(directory)/ca.pem"]
        if let purpose { arguments += ["-purpose", purpose] }
        if let untrustedPEM {
            try untrustedPEM.write(toFile: "\(directory)/chain.pem", atomically: true, encoding: .utf8)
            arguments += ["-untrusted", "\(directory)/chain.pem"]
        }
        arguments.append("\(directory)/leaf.pem")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        let errors = output.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "error ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        return OpenSSLVerify(passed: process.terminationStatus == 0 && output.contains(": OK"), errors: errors, output: output)
    }
}
