import CMITMTLSShims
import COpenSSL
import FoundationEssentials
import Glibc

/// Rendering of X.509 names, entry by entry (OpenSSL's print flags are macros Swift cannot see).
enum DistinguishedName {
    /// `CN=a, O=b`, most specific entry first.
    static func text(_ name: OpaquePointer?) -> String {
        entries(name).reversed().map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }

    static func commonName(_ name: OpaquePointer?) -> String? {
        entries(name).last { $0.key == "CN" }?.value
    }

    private static func entries(_ name: OpaquePointer?) -> [(key: String, value: String)] {
        guard let name else { return [] }
        var result: [(key: String, value: String)] = []
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index),
                let object = X509_NAME_ENTRY_get_object(entry),
                let data = X509_NAME_ENTRY_get_data(entry)
            else { continue }
            let nid = OBJ_obj2nid(object)
            let key = OBJ_nid2sn(nid).map { String(cString: $0) } ?? "?"
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, data)
            guard length >= 0, let utf8 else { continue }
            result.append((key, String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)))
            mitm_openssl_free(utf8)
        }
        return result
    }
}

/// Conversion of ASN.1 times to `Date`.
enum ASN1Time {
    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        guard let time else { return Date(timeIntervalSince1970: 0) }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
