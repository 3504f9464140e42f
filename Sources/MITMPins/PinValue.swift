import Foundation

/// What a configured pin string really is, and which chain element it would match if fixed.
struct PinValue {
    /// The canonical base64 of a 32-byte value, when the string is one.
    let canonical: String?
    /// Why the value cannot match as written, if it cannot.
    let problem: String?

    init(_ value: String, chain: [ChainElement]) {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if let bare = Self.strippingPrefix(trimmed) {
            canonical = nil
            let fixed = Self.base64SHA256(bare)
            problem =
                "written with the OkHttp/curl prefix (\(trimmed.prefix(8))...): this file wants the bare base64 value"
                + Self.wouldMatch(fixed, chain: chain)
            return
        }
        if let decoded = Data(base64Encoded: trimmed), !Self.isHex(trimmed) {
            if decoded.count == 32 {
                canonical = decoded.base64EncodedString()
                problem = nil
            } else {
                canonical = nil
                let sha1 = decoded.count == 20 ? " (a SHA-1 hash? pins here are SHA-256)" : ""
                problem = "decodes to \(decoded.count) bytes, not the 32 of a SHA-256\(sha1)"
            }
            return
        }
        canonical = nil
        if Self.isHex(trimmed), trimmed.count == 64 {
            let fixed = Self.hexToBase64(trimmed)
            problem = "hex, not base64: in base64 it is \(fixed ?? "?")" + Self.wouldMatch(fixed, chain: chain)
        } else {
            problem = "not base64"
        }
    }

    /// What a well-formed value that matches no pin is, when it is a hash of something else in the chain.
    static func misuse(_ canonical: String, chain: [ChainElement]) -> String? {
        if let element = chain.first(where: { $0.rawKey.sha256Base64 == canonical }) {
            return
                "this is the SHA-256 of the raw key of \(element.label) (\(element.rawKey.format), what SecKeyCopyExternalRepresentation returns), not of its SubjectPublicKeyInfo: the pin for that key is \(element.pin)"
        }
        if let element = chain.first(where: { $0.certificateSHA256Base64 == canonical }) {
            return
                "this is the SHA-256 of the whole certificate \(element.label), not of its public key: the key pin is \(element.pin)"
        }
        return nil
    }

    /// The value without its OkHttp (`sha256/`) or curl (`sha256//`) prefix. A pin may itself start with
    /// `/`, so `sha256//abc...` is ambiguous: the reading that decodes to 32 bytes wins.
    static func strippingPrefix(_ value: String) -> String? {
        let readings = ["sha256//", "sha256/"].filter { value.hasPrefix($0) }.map { String(value.dropFirst($0.count)) }
        return readings.first { base64SHA256($0) != nil } ?? readings.first
    }

    private static func base64SHA256(_ value: String) -> String? {
        guard let data = Data(base64Encoded: value), data.count == 32 else { return nil }
        return data.base64EncodedString()
    }

    private static func wouldMatch(_ fixed: String?, chain: [ChainElement]) -> String {
        guard let fixed, let element = chain.first(where: { $0.pin == fixed }) else { return "" }
        return "; fixed, it would match \(element.label)"
    }

    private static func isHex(_ value: String) -> Bool {
        !value.isEmpty && value.allSatisfy(\.isHexDigit) && value.count % 2 == 0 && value.count >= 40
    }

    private static func hexToBase64(_ value: String) -> String? {
        var bytes: [UInt8] = []
        var index = value.startIndex
        while index < value.endIndex {
            let next = value.index(index, offsetBy: 2)
            guard let byte = UInt8(value[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes).base64EncodedString()
    }
}
