import Foundation
import MITMTLS

/// One certificate of a chain, described for pinning: where it sits, whose it is, and its pin.
public struct ChainElement: Sendable {
    /// Position in its chain or file, from 0.
    public internal(set) var index: Int
    /// Leaf, intermediate or root.
    public let position: ChainPosition
    /// The subject, most specific entry first (`CN=api.example.com, O=Example`).
    public let subject: String
    /// The issuer, same form.
    public let issuer: String
    /// DNS names from subjectAltName.
    public let dnsNames: [String]
    /// Key type and size.
    public let key: KeyDescription
    /// Start of validity.
    public let notBefore: Date
    /// End of validity.
    public let notAfter: Date
    /// Whole days from the reference time to `notAfter`; negative once expired.
    public let daysLeft: Int
    /// The pin: base64(SHA-256(DER SubjectPublicKeyInfo)), ATS's `SPKI-SHA256-BASE64`.
    public let pin: String
    /// The raw key bytes and their hash, which is not a pin.
    public let rawKey: RawPublicKey
    /// Base64 of the SHA-256 of the whole DER certificate (a certificate hash, not a key pin).
    public let certificateSHA256Base64: String

    /// Describes `certificate`, the `index`th of a chain, with days counted from `now`.
    public init(_ certificate: X509Certificate, index: Int, position: ChainPosition, now: Date) throws(PinsError) {
        self.index = index
        self.position = position
        subject = certificate.subject
        issuer = certificate.issuer
        dnsNames = certificate.subjectAlternativeNames.compactMap {
            if case .dns(let name) = $0 { return name }
            return nil
        }
        key = KeyDescription(of: certificate)
        notBefore = certificate.notBefore
        notAfter = certificate.notAfter
        daysLeft = Int((notAfter.timeIntervalSince(now) / 86_400).rounded(.down))
        let info = certificate.subjectPublicKeyInfoDER
        guard !info.isEmpty else {
            throw PinsError("the certificate \(certificate.subject) has no readable public key")
        }
        pin = SHA256Digest.base64(info)
        rawKey = try RawPublicKey(of: certificate)
        certificateSHA256Base64 = SHA256Digest.base64(certificate.der)
    }

    /// A short name for messages: `[1] intermediate CN=Example CA`.
    public var label: String { "[\(index)] \(position.rawValue) \(subject.isEmpty ? "(empty subject)" : subject)" }
}

/// The certificates of one source (a file, a server, the proxy's CA), described for pinning.
public struct CertificateChain: Sendable {
    /// Where the certificates came from: a path, `host:port (SNI name)`, or the CA file.
    public let source: String
    /// Whether a server presented them (the first is then the leaf).
    public let served: Bool
    /// The certificates, in the order given.
    public let elements: [ChainElement]

    /// Describes `certificates` from `source`, with days counted from `now`.
    public init(source: String, certificates: [X509Certificate], served: Bool, now: Date) throws(PinsError) {
        self.source = source
        self.served = served
        var elements: [ChainElement] = []
        for (index, certificate) in certificates.enumerated() {
            let position = ChainPosition.of(certificate, index: index, served: served)
            elements.append(try ChainElement(certificate, index: index, position: position, now: now))
        }
        self.elements = elements
    }

    /// A chain made of already described elements.
    public init(source: String, served: Bool, elements: [ChainElement]) {
        self.source = source
        self.served = served
        self.elements = elements
    }

    /// One chain made of several sources (a server's chain, then a root from a file), renumbered.
    public init(joining chains: [CertificateChain]) {
        source = chains.map(\.source).joined(separator: " + ")
        served = chains.first?.served ?? false
        elements = chains.flatMap(\.elements).enumerated().map { offset, element in
            var element = element
            element.index = offset
            return element
        }
    }
}

extension ChainElement {
    /// Whether the certificate is a mitm-proxy CA (`O=mitm-proxy`, `CN=mitm-proxy CA <id>`).
    var isMITMProxyCA: Bool { Self.namesMITMProxyCA(subject) }

    /// Whether a mitm-proxy CA issued the certificate, or is it: a pin of it is the proxy's, never the server's.
    public var isForgedByMITMProxy: Bool { isMITMProxyCA || Self.namesMITMProxyCA(issuer) }

    private static func namesMITMProxyCA(_ name: String) -> Bool {
        name.contains("CN=mitm-proxy CA ") && name.contains("O=mitm-proxy")
    }
}
