import MITMCore
import MITMTLS

/// The forged names of recent upstream certificates. A pooled upstream serves client after client of one host, and
/// reading and checking its certificate's names again for each of them was 1.75% of a new connection's
/// instructions (callgrind). Keyed by the certificate object, which the memo keeps alive so that its identity cannot
/// be reused; confined to its loop, like the pool that holds it.
struct ForgeNamesMemo {
    private struct Entry {
        let certificate: X509Certificate
        let primary: String
        let names: [SubjectAlternativeName]
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    static let capacity = 32

    /// `ForgeNames.names(primary:upstream:)`, computed once per certificate and name.
    mutating func names(primary: String, upstream: X509Certificate?) -> [SubjectAlternativeName] {
        guard let upstream else { return ForgeNames.names(primary: primary, upstream: nil) }
        let key = ObjectIdentifier(upstream)
        if let entry = entries[key], entry.certificate === upstream, entry.primary == primary { return entry.names }
        let names = ForgeNames.names(primary: primary, upstream: upstream)
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = Entry(certificate: upstream, primary: primary, names: names)
        return names
    }
}
