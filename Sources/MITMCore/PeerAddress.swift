/// The address part of a peer description, the form a verdict's `client` has.
public enum PeerAddress {
    /// `10.0.0.7` from `10.0.0.7:50123`, `::1` from `[::1]:50123`; nil for a peer the proxy could not read (`client`).
    public static func host(of peer: String) -> String? {
        let utf8 = peer.utf8
        if utf8.first == UInt8(ascii: "["), let close = utf8.firstIndex(of: UInt8(ascii: "]")) {
            return String(peer[utf8.index(after: utf8.startIndex)..<close])
        }
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")), utf8.lastIndex(of: UInt8(ascii: ":")) == colon else { return nil }
        return String(peer[..<colon])
    }
}
