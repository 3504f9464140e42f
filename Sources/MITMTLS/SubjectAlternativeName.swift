import COpenSSL
import FoundationEssentials
import Glibc
import MITMCore

/// One subjectAltName entry the proxy understands.
public enum SubjectAlternativeName: Sendable, Hashable, CustomStringConvertible {
    /// A DNS name (possibly a `*.` wildcard).
    case dns(String)
    /// An IPv4 (4 bytes) or IPv6 (16 bytes) address.
    case ipAddress([UInt8])

    public var description: String {
        switch self {
        case .dns(let name): return "DNS:\(name)"
        case .ipAddress(let bytes): return "IP:\(IPAddressText.format(bytes))"
        }
    }

    static func read(from certificate: OpaquePointer) -> [SubjectAlternativeName] {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        var result: [SubjectAlternativeName] = []
        for index in 0..<OPENSSL_sk_num(names) {
            guard let element = OPENSSL_sk_value(names, index) else { continue }
            let general = element.assumingMemoryBound(to: GENERAL_NAME.self)
            var type: Int32 = 0
            guard let value = GENERAL_NAME_get0_value(general, &type) else { continue }
            let string = value.assumingMemoryBound(to: ASN1_STRING.self)
            guard let data = ASN1_STRING_get0_data(string) else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
            switch type {
            case GEN_DNS: result.append(.dns(String(decoding: bytes, as: UTF8.self)))
            case GEN_IPADD where bytes.count == 4 || bytes.count == 16: result.append(.ipAddress(bytes))
            default: continue
            }
        }
        return result
    }
}

/// Text forms of IP address bytes.
public enum IPAddressText {
    /// Dotted quad for 4 bytes, RFC 5952 text for 16 bytes.
    public static func format(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        return ok == nil ? bytes.map(String.init).joined(separator: ".") : String(cBuffer: buffer)
    }

    /// The 4 or 16 address bytes of an IP literal, or nil when `text` is not one.
    public static func parse(_ text: String) -> [UInt8]? {
        IPAddress(text)?.bytes
    }
}
