import COpenSSL
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Forges server certificates signed by the proxy's CA, one per set of names, cached until shortly
/// before expiry. Every leaf shares one key, separate from the CA key, generated at start-up.
public final class LeafForger: Sendable {
    /// The CA that signs the leaves.
    public let authority: CertificateAuthority
    /// The key of every forged leaf.
    public let leafKey: PrivateKey
    /// The pin (base64 SHA-256 of the SPKI) of every forged leaf: what a client was shown.
    public let leafPin: String
    /// How long a forged leaf is valid (kept under Apple's and Chrome's limits).
    public let validity: TimeInterval

    private let now: @Sendable () -> Date
    private let fixedExtensions: FixedLeafExtensions
    /// Legacy-backed copies of the keys, used for encoding and signing (see `PrivateKey.legacyCopy`).
    private let encodingLeafKey: PrivateKey
    private let signingKey: PrivateKey
    private let cache = Mutex(LeafCache())

    /// Creates a forger; `now` is injectable for tests of expiry.
    public init(
        authority: CertificateAuthority,
        leafKey: PrivateKey? = nil,
        validity: TimeInterval = 30 * 86_400,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(TLSError) {
        self.authority = authority
        let key: PrivateKey
        if let leafKey { key = leafKey } else { key = try PrivateKey.generateP256() }
        self.leafKey = key
        self.leafPin = SHA256Digest.base64(try key.subjectPublicKeyInfoDER())
        self.validity = validity
        self.now = now
        self.encodingLeafKey = key.legacyCopy() ?? key
        self.signingKey = authority.key.legacyCopy() ?? authority.key
        self.fixedExtensions = try FixedLeafExtensions(
            authority: authority.certificate, keyIsRSA: key.algorithm == "RSA")
    }

    /// How many leaves were actually signed (cache misses), for tests and statistics.
    public var forgedCount: Int { cache.withLock { $0.forgedCount } }

    /// Where forged leaves are parsed back (`X509Certificate.reparsed()`) off the loops.
    private static let reparsing = DispatchQueue(label: "mitm-proxy.leaf-encodings", qos: .utility)

    /// The leaf for `names` (first name is the subject CN when it fits), from the cache when still valid.
    ///
    /// A new leaf is handed out as built, and parsed back off the loops for the connections after it: a host's first
    /// connection does not wait for the parse, and the later ones send the encoding OpenSSL then keeps.
    public func leaf(for names: [SubjectAlternativeName]) throws(TLSError) -> X509Certificate {
        precondition(!names.isEmpty, "a forged leaf needs at least one name")
        let current = now()
        // Signing (~30 µs) happens under the lock, so two loops asking at once still forge one leaf.
        let result: Result<(leaf: X509Certificate, signed: Set<SubjectAlternativeName>?), TLSError> = cache.withLock {
            cache in
            if let recent = cache.recent(for: names, at: current) { return .success((recent, nil)) }
            let cacheKey = Set(names)
            if let cached = cache.valid(for: cacheKey, at: current) {
                cache.remember(cached, as: names)
                return .success((cached.certificate, nil))
            }
            do throws(TLSError) {
                let leaf = try sign(names: names, at: current)
                cache.store(leaf, for: cacheKey, as: names)
                return .success((leaf, cacheKey))
            } catch {
                return .failure(error)
            }
        }
        let (leaf, signed) = try result.get()
        if let signed { Self.reparsing.async { self.keepEncoding(of: leaf, for: signed) } }
        return leaf
    }

    private func keepEncoding(of leaf: X509Certificate, for key: Set<SubjectAlternativeName>) {
        guard let parsed = try? leaf.reparsed() else { return }
        cache.withLock { $0.replace(leaf, with: parsed, for: key) }
    }

    /// Returns once the leaves forged so far are parsed back (for tests).
    func waitForEncodings() {
        Self.reparsing.sync {}
    }

    private func sign(names: [SubjectAlternativeName], at current: Date) throws(TLSError) -> X509Certificate {
        guard let raw = X509_new() else { throw TLSError("allocating a certificate") }
        let certificate = X509Certificate(taking: raw, keepsEncoding: false)
        guard X509_set_version(raw, 2) == 1 else { throw TLSError("setting certificate version") }
        try X509Extensions.setRandomSerial(raw)
        try X509Extensions.setValidity(
            raw, from: current.addingTimeInterval(-86_400), until: current.addingTimeInterval(validity))
        guard let subject = X509_get_subject_name(raw) else { throw TLSError("reading the subject name") }
        let commonName: String? =
            switch names[0] {
            case .dns(let host) where host.utf8.count <= 64: host
            case .ipAddress(let bytes): IPAddressText.format(bytes)
            default: nil
            }
        if let commonName { try X509Extensions.setName(subject, [("O", "mitm-proxy"), ("CN", commonName)]) }
        guard X509_set_issuer_name(raw, X509_get_subject_name(authority.certificate.pointer)) == 1,
            X509_set_pubkey(raw, encodingLeafKey.pointer) == 1
        else {
            throw TLSError("setting issuer and public key")
        }
        try SubjectAlternativeNameExtension.add(names, critical: commonName == nil, to: raw)
        try fixedExtensions.add(to: raw)
        guard X509_sign(raw, signingKey.pointer, EVP_sha256()) > 0 else {
            throw TLSError("signing a forged certificate")
        }
        return certificate
    }
}

/// The extensions every forged leaf carries, built once.
// @unchecked Sendable: the extensions are immutable after init and only copied from.
private final class FixedLeafExtensions: @unchecked Sendable {
    private let extensions: [OpaquePointer]

    init(authority: X509Certificate, keyIsRSA: Bool) throws(TLSError) {
        let keyUsage: StaticString =
            keyIsRSA ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"
        var built: [OpaquePointer] = []
        for (nid, value) in [
            (NID_basic_constraints, "critical,CA:FALSE" as StaticString),
            (NID_key_usage, keyUsage),
            (NID_ext_key_usage, "serverAuth"),
            (NID_authority_key_identifier, "keyid:always"),
        ] {
            do {
                built.append(try X509Extensions.make(nid, value, issuer: authority.pointer, subject: nil))
            } catch {
                built.forEach { X509_EXTENSION_free($0) }
                throw error
            }
        }
        extensions = built
    }

    func add(to certificate: OpaquePointer) throws(TLSError) {
        for extensionPointer in extensions { try X509Extensions.add(extensionPointer, to: certificate) }
    }

    deinit { extensions.forEach { X509_EXTENSION_free($0) } }
}

/// Forged leaves by name set, bounded in size.
private struct LeafCache: ~Copyable {
    /// Each leaf with its expiry, read once (reading it from the certificate parses an ASN.1 time).
    private var leaves: [Set<SubjectAlternativeName>: (certificate: X509Certificate, notAfter: Date)] = [:]
    private(set) var forgedCount = 0
    private static let capacity = 10_000
    private static let renewalMargin: TimeInterval = 86_400

    /// The leaf last asked for, under the names as that caller listed them: most connections in a row go to one host,
    /// and comparing the list costs less than hashing a set of names.
    private var lastAsked: (names: [SubjectAlternativeName], certificate: X509Certificate, notAfter: Date)?

    func valid(for key: Set<SubjectAlternativeName>, at time: Date) -> (certificate: X509Certificate, notAfter: Date)? {
        guard let leaf = leaves[key], leaf.notAfter.timeIntervalSince(time) > Self.renewalMargin else { return nil }
        return leaf
    }

    func recent(for names: [SubjectAlternativeName], at time: Date) -> X509Certificate? {
        guard let lastAsked, lastAsked.names == names, lastAsked.notAfter.timeIntervalSince(time) > Self.renewalMargin
        else {
            return nil
        }
        return lastAsked.certificate
    }

    mutating func remember(_ leaf: (certificate: X509Certificate, notAfter: Date), as names: [SubjectAlternativeName]) {
        lastAsked = (names, leaf.certificate, leaf.notAfter)
    }

    /// `parsed` in place of `leaf`, where the cache still holds `leaf`.
    mutating func replace(_ leaf: X509Certificate, with parsed: X509Certificate, for key: Set<SubjectAlternativeName>) {
        if let entry = leaves[key], entry.certificate === leaf { leaves[key] = (parsed, entry.notAfter) }
        if let last = lastAsked, last.certificate === leaf { lastAsked = (last.names, parsed, last.notAfter) }
    }

    mutating func store(
        _ leaf: X509Certificate, for key: Set<SubjectAlternativeName>, as names: [SubjectAlternativeName]
    ) {
        if leaves.count >= Self.capacity { leaves.removeAll(keepingCapacity: true) }
        let notAfter = leaf.notAfter
        leaves[key] = (leaf, notAfter)
        lastAsked = (names, leaf, notAfter)
        forgedCount += 1
    }
}
