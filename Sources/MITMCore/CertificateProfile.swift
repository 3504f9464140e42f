/// Which certificate the proxy shows a client for one host: the trusted forged leaf, one that is wrong in
/// exactly one way (so that a refusal proves one check), a leaf with a key of the user's choosing, or the
/// origin's own certificate (no interception).
public enum CertificateProfile: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A leaf forged by the proxy CA for the requested names (the default).
    case trusted
    /// The right names, signed by a throwaway CA the client never saw.
    case untrustedRoot
    /// The right names, self-signed.
    case selfSigned
    /// A valid leaf from the proxy CA, for another host name only.
    case wrongHost
    /// A proxy-CA leaf for the right names that expired yesterday.
    case expired
    /// A proxy-CA leaf for the right names whose validity starts tomorrow.
    case notYetValid
    /// Signed by a key that is not the proxy CA's, under exactly the proxy CA's name and key identifier.
    case sameNameCA
    /// Signed by an intermediate that the proxy CA issued with `CA:FALSE`.
    case leafAsCA
    /// A proxy-CA leaf whose extended key usage lacks serverAuth.
    case noServerAuth
    /// A proxy-CA leaf carrying the key in the PEM file at `path` (a key-rotation rehearsal).
    case key(path: String)
    /// No interception: the tunnel is relayed, and the client sees the origin's own certificate.
    case passthrough

    /// The profiles that take no argument, in the order the audit runs them.
    public static let plain: [CertificateProfile] = [
        .trusted, .untrustedRoot, .selfSigned, .wrongHost, .expired, .notYetValid, .sameNameCA, .leafAsCA,
        .noServerAuth,
        .passthrough,
    ]

    /// Parses `trusted`, `expired`, ..., `key:FILE`.
    public init(parsing text: String) throws(CertificateProfileError) {
        if text.hasPrefix("key:") {
            let path = String(text.dropFirst(4))
            guard !path.isEmpty else {
                throw CertificateProfileError(
                    "\(text): give the PEM private key file after key:, as in key:next-key.pem")
            }
            self = .key(path: path)
            return
        }
        guard let profile = Self.plain.first(where: { $0.description == text.lowercased() }) else {
            let names = Self.plain.map(\.description).joined(separator: ", ")
            throw CertificateProfileError(
                "\(text.debugDescription) is not a certificate profile; use one of \(names), or key:FILE")
        }
        self = profile
    }

    /// The profile's name as written on the command line.
    public var description: String {
        switch self {
        case .trusted: "trusted"
        case .untrustedRoot: "untrusted-root"
        case .selfSigned: "self-signed"
        case .wrongHost: "wrong-host"
        case .expired: "expired"
        case .notYetValid: "not-yet-valid"
        case .sameNameCA: "same-name-ca"
        case .leafAsCA: "leaf-as-ca"
        case .noServerAuth: "no-server-auth"
        case .key(let path): "key:\(path)"
        case .passthrough: "passthrough"
        }
    }

    /// Whether a correct client must refuse the certificate: accepting it is a critical finding.
    public var isInvalid: Bool {
        switch self {
        case .trusted, .key, .passthrough: false
        default: true
        }
    }

    /// The one thing wrong with the certificate, for an invalid profile.
    public var defect: String? {
        switch self {
        case .untrustedRoot: "it is signed by a CA the client has never seen"
        case .selfSigned: "it is self-signed"
        case .wrongHost: "it names another host"
        case .expired: "it expired yesterday"
        case .notYetValid: "it is not valid before tomorrow"
        case .sameNameCA: "its signature is by another key than the proxy CA's whose name it carries"
        case .leafAsCA: "its issuer is not a CA (CA:FALSE)"
        case .noServerAuth: "it is not for TLS servers (no serverAuth usage)"
        case .trusted, .key, .passthrough: nil
        }
    }

    /// Alerts that refuse this profile's certificate besides the certificate alerts: a client that finds the
    /// signature of a `same-name-ca` leaf wrong says `decrypt_error` (RFC 8446 6.2: a signature that does not verify;
    /// OpenSSL does so), which for any other certificate is a negotiation failure.
    public var alsoRejectingCertificate: Set<TLSAlert> {
        self == .sameNameCA ? [.decryptError] : []
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        self = try CertificateProfile(parsing: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A malformed certificate profile name.
public struct CertificateProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The whole message.
    public let description: String
    init(_ description: String) { self.description = description }
}
