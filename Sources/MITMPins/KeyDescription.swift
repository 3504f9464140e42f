import MITMTLS

/// A public key's type and size, e.g. `RSA 2048` or `EC P-256`.
public struct KeyDescription: Codable, Sendable, Equatable, CustomStringConvertible {
    /// `RSA`, `EC`, or OpenSSL's short name for other types.
    public let algorithm: String
    /// Key size in bits.
    public let bits: Int
    /// The named curve of an EC key (`P-256`), nil otherwise.
    public let curve: String?

    /// The key of `certificate`.
    public init(of certificate: X509Certificate) {
        algorithm = certificate.keyAlgorithm
        bits = certificate.keyBits
        curve = certificate.keyCurve
    }

    /// `RSA 2048`, `EC P-256`, `Ed25519 256`.
    public var description: String {
        if let curve { return "\(algorithm) \(curve)" }
        return "\(algorithm) \(bits)"
    }
}
