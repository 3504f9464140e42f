/// A TLS client's fingerprint from its ClientHello, in the shape of JA4 (FoxIO's JA4 TLS client fingerprint).
///
/// `ja4` is JA4 as specified: protocol, version, SNI present (`d`) or not (`i`), cipher and extension counts, ALPN's
/// first and last characters; then the truncated SHA-256 of the sorted cipher suites, and of the sorted extensions
/// (without SNI and ALPN) with the signature algorithms in order. GREASE is left out everywhere.
///
/// `stable` is what the proxy tells clients apart by: the same, without what one client changes from connection to
/// connection (the SNI marker: an IP-literal target sends none; `padding`, whose presence depends on the name's length;
/// `pre_shared_key` and `early_data`, sent only when resuming), so that a client keeps one fingerprint across hosts
/// and resumptions. Two clients built on the same TLS stack and settings share it.
public struct ClientFingerprint: Sendable, Hashable, Codable {
    /// JA4 as specified, e.g. `t13d1516h2_8daaf6152771_e5627efa2ab1`.
    public let ja4: String
    /// The connection-independent variant the proxy compares, e.g. `t131514h2_8daaf6152771_3b5074b1b5d0`.
    public let stable: String

    /// Extensions that one client sends on some connections and not others.
    static let varyingExtensions: Set<UInt16> = [0x0000, 0x0015, 0x0029, 0x002A]
    private static let serverName: UInt16 = 0x0000
    private static let alpn: UInt16 = 0x0010

    /// The fingerprint of `hello`.
    public init(_ hello: ClientHello) {
        let version = Self.versionText(hello)
        let alpnText = Self.alpnText(hello.alpnProtocols.first)
        let ciphers = Self.hashedList(hello.cipherSuites.sorted())
        let sni = hello.extensionTypes.contains(Self.serverName) ? "d" : "i"
        let all = hello.extensionTypes
        let steady = all.filter { !Self.varyingExtensions.contains($0) }
        ja4 =
            "t\(version)\(sni)\(Self.count(hello.cipherSuites))\(Self.count(all))\(alpnText)_\(ciphers)_"
            + Self.extensionHash(all, signatureAlgorithms: hello.signatureAlgorithms)
        stable =
            "t\(version)\(Self.count(hello.cipherSuites))\(Self.count(steady))\(alpnText)_\(ciphers)_"
            + Self.extensionHash(steady, signatureAlgorithms: hello.signatureAlgorithms)
    }

    private static func versionText(_ hello: ClientHello) -> String {
        let offered = hello.supportedVersions.filter { !TLSGrease.isGrease($0) }
        switch offered.max() ?? hello.legacyVersion {
        case 0x0304: return "13"
        case 0x0303: return "12"
        case 0x0302: return "11"
        case 0x0301: return "10"
        case 0x0300: return "s3"
        default: return "00"
        }
    }

    private static func count(_ list: [UInt16]) -> String {
        let value = min(list.count, 99)
        return value < 10 ? "0\(value)" : "\(value)"
    }

    /// The first and last characters of the first ALPN value (`00` without ALPN; hex digits when not alphanumeric).
    private static func alpnText(_ value: String?) -> String {
        guard let bytes = value.map({ Array($0.utf8) }), let first = bytes.first, let last = bytes.last else {
            return "00"
        }
        let alphanumeric = { (byte: UInt8) in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        guard alphanumeric(first), alphanumeric(last) else {
            let firstHex = DigitText.hex([first])
            let lastHex = DigitText.hex([last])
            return String(firstHex.first!) + String(lastHex.last!)
        }
        return String(decoding: [first, last], as: UTF8.self)
    }

    private static func hexList(_ list: [UInt16]) -> String {
        list.map { DigitText.hex([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }.joined(separator: ",")
    }

    private static func hashedList(_ list: [UInt16]) -> String {
        list.isEmpty ? "000000000000" : String(SHA256.hex(hexList(list)).prefix(12))
    }

    private static func extensionHash(_ extensions: [UInt16], signatureAlgorithms: [UInt16]) -> String {
        let hashed = extensions.filter { $0 != serverName && $0 != alpn }.sorted()
        guard !hashed.isEmpty else { return "000000000000" }
        let text = signatureAlgorithms.isEmpty ? hexList(hashed) : hexList(hashed) + "_" + hexList(signatureAlgorithms)
        return String(SHA256.hex(text).prefix(12))
    }
}
