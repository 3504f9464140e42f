/// The address part of a peer description, the form a verdict's `client` has.
public enum PeerAddress {
    /// `10.0.0.7` from `10.0.0.7:50123`, `::1` from `[::1]:50123`; nil for a peer the proxy could not read (`client`).
    public static func host(of peer: String) -> String? {
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") { return String(peer[peer.index(after: peer.startIndex)..<close]) }
        guard let colon = peer.lastIndex(of: ":"), peer.filter({ $0 == ":" }).count == 1 else { return nil }
        return String(peer[..<colon])
    }
}
