import Foundation
import MITMCore

/// The readable and JSON reports of `mitm-proxy pins`.
public enum ChainReport {
    /// Days before a certificate's end that reports call "soon".
    public static let soonDays = 30

    /// A readable description of every certificate of `chains`, with raw-key hashes when `rawKey`.
    public static func text(_ chains: [CertificateChain], rawKey: Bool) -> String {
        var lines: [String] = []
        for chain in chains {
            let count = chain.elements.count == 1 ? "1 certificate" : "\(chain.elements.count) certificates"
            lines.append("\(chain.source): \(count)")
            if let forged = chain.elements.first(where: \.isForgedByMITMProxy) {
                lines.append(
                    "  WARNING: FORGED BY A MITM-PROXY CA (\(forged.isMITMProxyCA ? forged.subject : forged.issuer)): these are the"
                )
                lines.append(
                    "  proxy's keys, not the server's. NEVER pin them: an app shipped with them fails against the real server."
                )
                lines.append(
                    "  Run mitm-proxy pins without --proxy, or through a mitm-proxy that relays its own probe untouched."
                )
            }
            for element in chain.elements {
                lines.append("")
                lines += describe(element, rawKey: rawKey).map { "  " + $0 }
            }
            if chain.served, let last = chain.elements.last, last.position != .root {
                lines.append("")
                lines.append("  The server did not send its root certificate (servers rarely do). To pin the root,")
                lines.append("  get its file from the CA and run: mitm-proxy pins root.pem")
            }
            lines.append("")
        }
        if rawKey { lines += rawKeyFootnote }
        return lines.joined(separator: "\n")
    }

    /// The facts of `chains` as pretty-printed JSON, raw-key hashes included when `rawKey`.
    public static func json(_ chains: [CertificateChain], rawKey: Bool, now: Date) -> String {
        let document = ReportJSON(
            generatedAt: now,
            chains: chains.map { chain in
                ChainJSON(
                    source: chain.source, served: chain.served,
                    certificates: chain.elements.map { ElementJSON($0, rawKey: rawKey) })
            }
        )
        return JSONText.encode(document)
    }

    /// The lines for one certificate, without indentation.
    static func describe(_ element: ChainElement, rawKey: Bool) -> [String] {
        var lines = [
            "[\(element.index)] \(element.position.rawValue)  \(element.subject.isEmpty ? "(empty subject)" : element.subject)"
        ]
        func field(_ name: String, _ value: String) {
            lines.append("    " + name.padding(toLength: 20, withPad: " ", startingAt: 0) + value)
        }
        field("issuer", element.issuer)
        if !element.dnsNames.isEmpty { field("names", element.dnsNames.joined(separator: ", ")) }
        field("key", element.key.description)
        field("not after", "\(DateText.minute(element.notAfter)) (\(DateText.daysLeft(element.daysLeft)))")
        field("SPKI-SHA256-BASE64", element.pin)
        if element.isForgedByMITMProxy {
            field("warning", "issued by a mitm-proxy CA: a forgery, never a pin for an app")
        }
        if element.daysLeft <= soonDays {
            field(
                "warning",
                element.daysLeft < 0
                    ? "expired: a server cannot present it any more; a pin on its key holds only if the renewal kept the key"
                    : "expires within \(soonDays) days: a pin on this key breaks at renewal unless the new certificate keeps the key or a backup pin shipped first"
            )
        }
        if rawKey {
            field("raw key SHA-256", "\(element.rawKey.sha256Base64)  (NOT a pin)")
            field("raw key bytes", "\(element.rawKey.format), \(element.rawKey.bytes.count) bytes")
            if let header = element.rawKey.subjectPublicKeyInfoHeader {
                field("SPKI header", "\(header.count) bytes \(hex(header)) (SPKI = header + raw key)")
            }
        }
        return lines
    }

    private static let rawKeyFootnote = [
        "raw key SHA-256 is the hash of the bare public key (for RSA the PKCS#1 RSAPublicKey, for EC the",
        "04||X||Y point): the bytes SecKeyCopyExternalRepresentation returns. No pinning API compares it.",
        "ATS, OkHttp, Android, TrustKit and curl hash the DER SubjectPublicKeyInfo, which is the raw key",
        "behind an algorithm header (shown above); hashing the raw key alone gives a value that never matches.",
        "",
    ]

    static func hex(_ bytes: [UInt8]) -> String {
        DigitText.hex(bytes)
    }
}

private struct ReportJSON: Encodable {
    let generatedAt: Date
    let chains: [ChainJSON]
}

private struct ChainJSON: Encodable {
    let source: String
    let served: Bool
    let certificates: [ElementJSON]
}

/// One certificate in JSON: `pin` is the SPKI-SHA256-BASE64 value.
struct ElementJSON: Encodable {
    let index: Int
    let position: ChainPosition
    let subject: String
    let issuer: String
    let dnsNames: [String]
    let keyAlgorithm: String
    let keyBits: Int
    let keyCurve: String?
    let notBefore: Date
    let notAfter: Date
    let daysLeft: Int
    let pin: String
    let rawKey: RawKeyJSON?
    /// Set when a mitm-proxy CA issued (or is) the certificate: its pin is the proxy's, never the server's.
    let forgedByMitmProxy: Bool?

    init(_ element: ChainElement, rawKey: Bool) {
        index = element.index
        forgedByMitmProxy = element.isForgedByMITMProxy ? true : nil
        position = element.position
        subject = element.subject
        issuer = element.issuer
        dnsNames = element.dnsNames
        keyAlgorithm = element.key.algorithm
        keyBits = element.key.bits
        keyCurve = element.key.curve
        notBefore = element.notBefore
        notAfter = element.notAfter
        daysLeft = element.daysLeft
        pin = element.pin
        self.rawKey = rawKey ? RawKeyJSON(element.rawKey) : nil
    }
}

/// The raw key hash in JSON, labelled so that no tool mistakes it for a pin.
struct RawKeyJSON: Encodable {
    let sha256Base64: String
    let format: String
    let byteCount: Int
    let subjectPublicKeyInfoHeaderHex: String?
    let note =
        "not a pin: SHA-256 of the raw key bytes (what SecKeyCopyExternalRepresentation returns), not of the SubjectPublicKeyInfo"

    init(_ key: RawPublicKey) {
        sha256Base64 = key.sha256Base64
        format = key.format
        byteCount = key.bytes.count
        subjectPublicKeyInfoHeaderHex = key.subjectPublicKeyInfoHeader.map(ChainReport.hex)
    }
}

/// JSON encoding shared by the reports: sorted keys, ISO 8601 dates, unescaped slashes (base64 has them).
enum JSONText {
    static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
