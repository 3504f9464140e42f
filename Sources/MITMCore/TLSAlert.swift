/// A TLS alert description (RFC 8446 section 6), named as the RFC spells it.
public struct TLSAlert: Sendable, Hashable, CustomStringConvertible {
    /// The one-byte alert description.
    public let code: UInt8

    /// Wraps an alert description byte.
    public init(code: UInt8) { self.code = code }

    /// The RFC name, e.g. `unknown_ca`, or `alert_<code>` for codes the RFCs do not name.
    public var name: String { Self.names[code] ?? "alert_\(code)" }

    public var description: String { name }

    /// Whether the alert means the peer rejected the certificate it was shown (evidence of pinning or
    /// of an untrusted CA), as opposed to an incompatibility in the negotiation.
    public var rejectsCertificate: Bool { Self.certificateAlerts.contains(code) }

    /// close_notify (0).
    public static let closeNotify = TLSAlert(code: 0)
    /// bad_certificate (42).
    public static let badCertificate = TLSAlert(code: 42)
    /// certificate_unknown (46).
    public static let certificateUnknown = TLSAlert(code: 46)
    /// unknown_ca (48).
    public static let unknownCA = TLSAlert(code: 48)
    /// decrypt_error (51).
    public static let decryptError = TLSAlert(code: 51)
    /// handshake_failure (40).
    public static let handshakeFailure = TLSAlert(code: 40)

    private static let certificateAlerts: Set<UInt8> = [42, 43, 44, 45, 46, 48, 49]

    private static let names: [UInt8: String] = [
        0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 21: "decryption_failed",
        22: "record_overflow", 30: "decompression_failure", 40: "handshake_failure", 41: "no_certificate",
        42: "bad_certificate", 43: "unsupported_certificate", 44: "certificate_revoked",
        45: "certificate_expired", 46: "certificate_unknown", 47: "illegal_parameter", 48: "unknown_ca",
        49: "access_denied", 50: "decode_error", 51: "decrypt_error", 60: "export_restriction",
        70: "protocol_version", 71: "insufficient_security", 80: "internal_error",
        86: "inappropriate_fallback", 90: "user_canceled", 100: "no_renegotiation",
        109: "missing_extension", 110: "unsupported_extension", 111: "certificate_unobtainable",
        112: "unrecognized_name", 113: "bad_certificate_status_response", 114: "bad_certificate_hash_value",
        115: "unknown_psk_identity", 116: "certificate_required", 120: "no_application_protocol",
    ]
}
