/// GREASE values (RFC 8701): reserved code points clients send at random to keep servers tolerant. They say nothing
/// about the client, so fingerprints leave them out.
enum TLSGrease {
    /// Whether `value` is one of the sixteen GREASE code points `0x?a?a`.
    static func isGrease(_ value: UInt16) -> Bool {
        value & 0x0F0F == 0x0A0A && value >> 12 == (value >> 4) & 0x0F
    }
}
