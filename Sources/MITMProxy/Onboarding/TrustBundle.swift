import Foundation

/// The CA file for variables that **replace** a client's trust store (`SSL_CERT_FILE`, `CURL_CA_BUNDLE`,
/// `REQUESTS_CA_BUNDLE`): the system's trusted roots plus the proxy's CA, so that such a client still validates the
/// origins the proxy does not intercept (passthrough hosts, `--ignore-hosts` tunnels, an audit's passthrough round).
enum TrustBundle {
    /// Where distributions keep their bundle of trusted roots (Debian/Ubuntu, Fedora/RHEL, Alpine/macOS, openSUSE).
    static let systemBundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem",
        "/etc/ssl/ca-bundle.pem",
    ]

    /// Writes `ca-and-system-roots.pem` beside the CA certificate `caPEM` (the CA directory) and returns its path; the
    /// CA alone when no system bundle can be read or the file cannot be written.
    static func write(besides caPEM: String) -> String {
        guard let ca = FileManager.default.contents(atPath: caPEM),
            let system = systemBundles.lazy.compactMap({ FileManager.default.contents(atPath: $0) }).first
        else { return caPEM }
        let path = (caPEM as NSString).deletingLastPathComponent + "/ca-and-system-roots.pem"
        var bundle = system
        if bundle.last != UInt8(ascii: "\n") { bundle.append(UInt8(ascii: "\n")) }
        bundle.append(contentsOf: Array("# mitm-proxy CA\n".utf8))
        bundle.append(ca)
        guard FileManager.default.createFile(atPath: path, contents: bundle, attributes: [.posixPermissions: 0o644])
        else { return caPEM }
        return path
    }
}
