/// A finding about a pinned domain that does not decide the match but threatens it.
public struct PinWarning: Sendable, Equatable, Codable {
    /// A stable identifier for tools.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// The entry itself is malformed (a bad date, a wrong digest, a missing key).
        case configuration
        /// No usable pin at all.
        case noPins = "no-pins"
        /// One pin and no backup.
        case singlePin = "single-pin"
        /// Every pin that matches is on a certificate expiring within 30 days.
        case expiringPins = "expiring-pins"
        /// Only the leaf is pinned.
        case leafOnly = "leaf-only"
        /// ATS with both lists: the leaf must match even though CA pins are there.
        case leafRequired = "leaf-required"
        /// An Android pin-set past its expiration: pinning is off.
        case pinSetExpired = "pin-set-expired"
        /// An Android pin-set expiring within 30 days.
        case pinSetExpiring = "pin-set-expiring"
        /// Android trust anchors with `overridePins="true"` skip pinning.
        case overridePins = "override-pins"
        /// The chain has no root, so a root pin cannot be seen.
        case rootNotInChain = "root-not-in-chain"
    }

    /// Which finding.
    public let code: Code
    /// What it means and what to do.
    public let message: String

    /// A finding.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
