import MITMCore
import Synchronization

/// Fingerprints already computed, by what they are computed from: a client sends the same ClientHello fields on
/// every connection, and the four SHA-256 digests behind a fingerprint cost more than a lookup.
enum FingerprintMemo {
    private struct Input: Hashable {
        let serverNameSent: Bool
        let firstALPN: String?
        let versions: [UInt16]
        let legacyVersion: UInt16
        let cipherSuites: [UInt16]
        let extensionTypes: [UInt16]
        let signatureAlgorithms: [UInt16]

        init(_ hello: ClientHello) {
            serverNameSent = hello.extensionTypes.contains(0)
            firstALPN = hello.alpnProtocols.first
            versions = hello.supportedVersions
            legacyVersion = hello.legacyVersion
            cipherSuites = hello.cipherSuites
            extensionTypes = hello.extensionTypes
            signatureAlgorithms = hello.signatureAlgorithms
        }
    }

    /// Bounded: a run sees a handful of client stacks; a flood of made-up ClientHellos only empties it now and then.
    private static let limit = 1024
    private static let known = Mutex<[Input: ClientFingerprint]>([:])

    /// The fingerprint of `hello`.
    static func fingerprint(_ hello: ClientHello) -> ClientFingerprint {
        let input = Input(hello)
        if let found = known.withLock({ $0[input] }) { return found }
        let fingerprint = ClientFingerprint(hello)
        known.withLock { table in
            if table.count >= limit { table.removeAll(keepingCapacity: true) }
            table[input] = fingerprint
        }
        return fingerprint
    }
}
