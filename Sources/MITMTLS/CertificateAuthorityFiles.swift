import Foundation

/// The file layout of a CA directory.
public struct CertificateAuthorityFiles: Sendable, Equatable {
    /// The directory (mode 0700).
    public let directory: String
    /// `ca.pem`: the CA certificate in PEM, for curl `--cacert`, `SSL_CERT_FILE` and friends.
    public var certificatePEM: String { directory + "/ca.pem" }
    /// `ca.cer`: the same certificate in DER, for Android and iOS installs.
    public var certificateDER: String { directory + "/ca.cer" }
    /// `ca-key.pem`: the CA private key, PKCS#8 PEM (mode 0600).
    public var privateKey: String { directory + "/ca-key.pem" }

    /// The layout under `directory` (`~` expanded).
    public init(directory: String) {
        self.directory = (directory as NSString).expandingTildeInPath
    }

    /// `$HOME/.mitm-proxy` (the account's home directory when `HOME` is unset).
    public static var defaultDirectory: String {
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.mitm-proxy"
    }
}
