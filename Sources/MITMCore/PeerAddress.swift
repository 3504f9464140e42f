/// The address part of a peer description, the form a verdict's `client` has.
package enum PeerAddress {
    /// `10.0.0.7` from `10.0.0.7:50123`, `::1` from `[::1]:50123`; nil for a peer the proxy could not read (`client`).
    package static func host(of peer: String) -> String? {
        var peer = peer
        return peer.withUTF8 { bytes in
            if bytes.first == UInt8(ascii: "["), let close = bytes.firstIndex(of: UInt8(ascii: "]")) {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[1..<close]), as: UTF8.self)
            }
            guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes.lastIndex(of: UInt8(ascii: ":")) == colon
            else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<colon]), as: UTF8.self)
        }
    }
}
