import FoundationEssentials
import Glibc

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
        self.directory = Self.expandingTilde(directory)
    }

    /// `$HOME/.mitm-proxy` (the account's home directory when `HOME` is unset).
    public static var defaultDirectory: String {
        home() + "/.mitm-proxy"
    }

    /// `~` and `~/...` become the home directory, `~user` and `~user/...` that account's home directory (as
    /// `NSString.expandingTildeInPath` does, trailing slashes dropped); anything else, or an unknown account,
    /// stays as it is.
    static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~") else { return path }
        let user = path.dropFirst().prefix { $0 != "/" }
        guard let home = user.isEmpty ? home() : accountHome(String(user)) else { return path }
        var expanded = home + path.dropFirst(1 + user.count)
        while expanded.count > 1, expanded.hasSuffix("/") { expanded.removeLast() }
        return expanded
    }

    /// `HOME`, or the account's home directory from the password database when `HOME` is unset or empty.
    private static func home() -> String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &found) == 0, let found,
            let directory = found.pointee.pw_dir
        else {
            return "/"
        }
        return String(decoding: UnsafeRawBufferPointer(start: directory, count: strlen(directory)), as: UTF8.self)
    }

    private static func accountHome(_ user: String) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwnam_r(user, &entry, &buffer, buffer.count, &found) == 0, let found,
            let directory = found.pointee.pw_dir
        else {
            return nil
        }
        return String(decoding: UnsafeRawBufferPointer(start: directory, count: strlen(directory)), as: UTF8.self)
    }
}
