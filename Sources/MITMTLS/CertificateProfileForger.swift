import FoundationEssentials
import Glibc
import MITMCore
import Synchronization

/// Forges the certificate of each profile (`CertificateProfile`) for a set of names, cached per (profile, names).
/// `trusted` and `key:FILE` leaves come from `LeafForger`s; the invalid profiles differ from a trusted leaf in
/// exactly one way each, with throwaway keys and CAs made on first use and kept in memory.
public final class CertificateProfileForger: Sendable {
    /// The forger of trusted leaves.
    public let trusted: LeafForger
    /// The host name `wrong-host` leaves are made for.
    public static let wrongHostName = "wrong-host.mitm-proxy.invalid"

    private let keyForgers: [String: LeafForger]
    private let now: @Sendable () -> Date
    private let throwaway = Mutex<ThrowawayAuthorities?>(nil)
    private let cache = Mutex<[String: (made: Date, identity: ForgedIdentity)]>([:])
    private static let cacheLifetime: TimeInterval = 3_600
    private static let cacheCapacity = 10_000

    /// A forger of every profile; `keyFiles` are the PEM private keys of the `key:FILE` profiles in use, read now.
    public init(trusted: LeafForger, keyFiles: [String] = [], now: @escaping @Sendable () -> Date = { Date() })
        throws(CertificateProfileSetupError)
    {
        self.trusted = trusted
        self.now = now
        var forgers: [String: LeafForger] = [:]
        for path in keyFiles where forgers[path] == nil {
            let key = try Self.readKey(path)
            do {
                forgers[path] = try LeafForger(
                    authority: trusted.authority, leafKey: key, validity: trusted.validity, now: now)
            } catch {
                throw CertificateProfileSetupError("key:\(path): cannot forge a certificate with this key: \(error)")
            }
        }
        keyForgers = forgers
    }

    /// Reads a `key:FILE` private key, or says clearly why it cannot be used.
    public static func readKey(_ path: String) throws(CertificateProfileSetupError) -> PrivateKey {
        let bytes: [UInt8]
        do {
            bytes = try FileStore.read(path, what: "the private key of key:\(path)")
        } catch {
            throw CertificateProfileSetupError("key:\(path): \(error.description)")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: bytes)
        } catch {
            _ = OpenSSLErrorStack.drain()
            throw CertificateProfileSetupError(
                "key:\(path): not an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----, EC or RSA)")
        }
        guard key.algorithm == "EC" || (key.algorithm == "RSA" && key.bits >= 2048) else {
            throw CertificateProfileSetupError(
                "key:\(path): a \(key.algorithm) key of \(key.bits) bits; use an EC key or RSA of 2048 bits or more")
        }
        return key
    }

    /// The identity to present for `profile` and `names` (first name first). `passthrough` forges nothing: it gets the trusted leaf.
    public func identity(for profile: CertificateProfile, names: [SubjectAlternativeName]) throws(TLSError)
        -> ForgedIdentity
    {
        switch profile {
        case .trusted, .passthrough:
            return ForgedIdentity(certificate: try trusted.leaf(for: names), key: trusted.leafKey, pin: trusted.leafPin)
        case .wrongHost:
            return ForgedIdentity(
                certificate: try trusted.leaf(for: [.dns(Self.wrongHostName)]), key: trusted.leafKey,
                pin: trusted.leafPin)
        case .key(let path):
            guard let forger = keyForgers[path] else {
                throw TLSError("key:\(path) was not loaded when the proxy started")
            }
            return ForgedIdentity(certificate: try forger.leaf(for: names), key: forger.leafKey, pin: forger.leafPin)
        default:
            return try cached(profile, names)
        }
    }

    private func cached(_ profile: CertificateProfile, _ names: [SubjectAlternativeName]) throws(TLSError)
        -> ForgedIdentity
    {
        let key = "\(profile)|" + names.map(\.description).joined(separator: ",")
        let current = now()
        if let hit = cache.withLock({ $0[key] }), current.timeIntervalSince(hit.made) < Self.cacheLifetime {
            return hit.identity
        }
        let identity = try forge(profile, names, at: current)
        cache.withLock { entries in
            if entries.count >= Self.cacheCapacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = (current, identity)
        }
        return identity
    }

    private func authorities(at current: Date) throws(TLSError) -> ThrowawayAuthorities {
        let result: Result<ThrowawayAuthorities, TLSError> = throwaway.withLock { made in
            if let made { return .success(made) }
            do throws(TLSError) {
                let fresh = try ThrowawayAuthorities(authority: trusted.authority, now: current)
                made = fresh
                return .success(fresh)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func forge(_ profile: CertificateProfile, _ names: [SubjectAlternativeName], at current: Date)
        throws(TLSError) -> ForgedIdentity
    {
        let authority = trusted.authority
        let leafKey = trusted.leafKey
        let day: TimeInterval = 86_400
        var recipe = CertificateRecipe.leaf(
            names: names, key: leafKey, issuer: authority.certificate, signingKey: authority.key,
            notBefore: current.addingTimeInterval(-day), notAfter: current.addingTimeInterval(trusted.validity))
        var chain: [X509Certificate] = []
        switch profile {
        case .untrustedRoot:
            let throwaway = try authorities(at: current)
            recipe.issuer = throwaway.untrustedRoot
            recipe.signingKey = throwaway.untrustedRootKey
        case .selfSigned:
            recipe.issuer = nil
            recipe.signingKey = leafKey
            // OpenSSL (like most verifiers) calls a certificate self-signed only if it may sign certificates at all.
            recipe.keyUsage = nil
        case .expired:
            recipe.notBefore = current.addingTimeInterval(-31 * day)
            recipe.notAfter = current.addingTimeInterval(-day)
        case .notYetValid:
            recipe.notBefore = current.addingTimeInterval(day)
            recipe.notAfter = current.addingTimeInterval(31 * day)
        case .sameNameCA:
            recipe.signingKey = try authorities(at: current).impostorKey
        case .leafAsCA:
            let throwaway = try authorities(at: current)
            recipe.issuer = throwaway.nonCAIntermediate
            recipe.signingKey = throwaway.nonCAIntermediateKey
            chain = [throwaway.nonCAIntermediate]
        case .noServerAuth:
            recipe.extendedKeyUsage = "clientAuth"
        case .trusted, .wrongHost, .key, .passthrough:
            break
        }
        return ForgedIdentity(certificate: try recipe.sign(), chain: chain, key: leafKey)
    }
}

/// A `key:FILE` profile that cannot be used, phrased for the user.
public struct CertificateProfileSetupError: Error, Sendable, CustomStringConvertible {
    /// The whole message.
    public let description: String
    init(_ description: String) { self.description = description }
}
