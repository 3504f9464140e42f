import MITMTLS

/// Where a certificate sits in a chain: what ATS calls a leaf identity or a CA identity.
public enum ChainPosition: String, Codable, Sendable, CaseIterable {
    /// The server's own certificate.
    case leaf
    /// A CA certificate between the leaf and the root.
    case intermediate
    /// A self-issued CA certificate: the trust anchor.
    case root

    /// Whether a pin on this certificate is a CA pin (`NSPinnedCAIdentities`).
    public var isCA: Bool { self != .leaf }

    /// The position of `certificate`, the `index`th of a chain.
    ///
    /// In a chain a server presented (`served`), the first certificate is the leaf by definition.
    /// Certificates from files are judged on their own: self-issued CA certificates are roots,
    /// other CA certificates intermediates, and the rest leaves.
    public static func of(_ certificate: X509Certificate, index: Int, served: Bool) -> ChainPosition {
        if served && index == 0 { return .leaf }
        if certificate.isSelfIssued { return certificate.isCA || served ? .root : .leaf }
        return certificate.isCA || served ? .intermediate : .leaf
    }
}
