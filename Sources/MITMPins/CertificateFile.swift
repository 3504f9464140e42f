import Foundation
import MITMTLS

/// Reading certificates from files: PEM with one or more certificates, or one DER certificate.
public enum CertificateFile {
    /// The certificates in `path`, in file order. Errors name the file and what is wrong with it.
    public static func read(_ path: String) throws(PinsError) -> [X509Certificate] {
        try certificates(in: FileBytes.read(path, what: "certificate file"), path: path)
    }

    /// The certificates in `bytes`, read from `path` (used in messages only).
    public static func certificates(in bytes: [UInt8], path: String) throws(PinsError) -> [X509Certificate] {
        guard !bytes.isEmpty else {
            throw PinsError("\(path) is empty: expected a PEM or DER certificate")
        }
        let labels = pemLabels(in: bytes)
        if !labels.isEmpty && !labels.contains(where: isCertificateLabel) {
            let found = labels.map { "-----BEGIN \($0)-----" }.joined(separator: ", ")
            throw PinsError("\(path) has no certificate: it holds \(found) but no -----BEGIN CERTIFICATE----- block")
        }
        do {
            return try X509Certificate.certificates(inFileBytes: bytes)
        } catch {
            if !labels.isEmpty {
                throw PinsError(
                    "\(path) holds a damaged PEM certificate (\(error.stack.reason)): copy the whole -----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- block again"
                )
            }
            if looksLikeText(bytes) {
                throw PinsError(
                    "\(path) is not a certificate: no -----BEGIN CERTIFICATE----- line, and it is text, not DER")
            }
            throw PinsError(
                "\(path) is not a valid DER certificate (\(bytes.count) bytes): truncated or not a certificate")
        }
    }

    /// The proxy's own CA certificate, `ca.pem` in the CA directory `directory` (`~` expanded).
    public static func proxyCA(directory: String) throws(PinsError) -> [X509Certificate] {
        let path = CertificateAuthorityFiles(directory: directory).certificatePEM
        guard FileManager.default.fileExists(atPath: path) else {
            throw PinsError(
                "no proxy CA at \(path): start the proxy (or run `mitm-proxy ca path`) once to create it, or pass --ca-dir with the directory that holds ca.pem"
            )
        }
        return try read(path)
    }

    /// The default CA directory, `~/.mitm-proxy`.
    public static var defaultCADirectory: String { CertificateAuthorityFiles.defaultDirectory }

    private static func isCertificateLabel(_ label: String) -> Bool {
        label == "CERTIFICATE" || label == "X509 CERTIFICATE"
    }

    /// The labels of `-----BEGIN LABEL-----` lines, in order.
    static func pemLabels(in bytes: [UInt8]) -> [String] {
        guard looksLikeText(bytes) else { return [] }
        let text = String(decoding: bytes, as: UTF8.self)
        var labels: [String] = []
        var rest = Substring(text)
        while let begin = rest.range(of: "-----BEGIN ") {
            rest = rest[begin.upperBound...]
            guard let end = rest.range(of: "-----") else { break }
            labels.append(String(rest[..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return labels
    }

    /// Whether the first bytes are printable ASCII or whitespace (PEM, a note), not DER.
    private static func looksLikeText(_ bytes: [UInt8]) -> Bool {
        bytes.prefix(512).allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32...126).contains($0) }
    }
}
