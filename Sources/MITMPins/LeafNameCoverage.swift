/// Whether a chain's leaf certificate names a pinned domain: a chain whose leaf is for other names can match a pin and
/// still never be presented for that domain, so `pins check` says so beside the result.
enum LeafNameCoverage {
    /// A note when `chain`'s leaf has DNS names and none covers `domain` (exactly, or as `*.parent` for one label);
    /// nil when it does, or when there is no leaf or it names nothing.
    static func note(for domain: String, chain: CertificateChain) -> String? {
        guard let leaf = chain.elements.first(where: { $0.position == .leaf }), !leaf.dnsNames.isEmpty else {
            return nil
        }
        guard !leaf.dnsNames.contains(where: { covers($0, domain) }) else { return nil }
        return "note: the leaf certificate's names (\(leaf.dnsNames.joined(separator: ", "))) do not cover \(domain): "
            + "a server for \(domain) would not present it"
    }

    /// Whether the certificate name `name` covers `host`, as a TLS client checks it (RFC 6125: a wildcard stands for one
    /// whole left-most label).
    static func covers(_ name: String, _ host: String) -> Bool {
        let name = name.lowercased()
        let host = host.lowercased()
        if name == host { return true }
        guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
        return host[host.index(after: dot)...] == name.dropFirst(2) && host.startIndex != dot
    }
}
