import COpenSSL
import FoundationEssentials
import Glibc

/// Builders for the fixed X.509 extensions of the CA and forged leaves. Only constant strings go
/// through OpenSSL's config syntax; names from the network never do (see `SubjectAlternativeNameExtension`).
enum X509Extensions {
    /// Builds one extension from a constant OpenSSL config value, in the context of `issuer`/`subject`.
    static func make(
        _ nid: Int32,
        _ value: StaticString,
        issuer: OpaquePointer?,
        subject: OpaquePointer?
    ) throws(TLSError) -> OpaquePointer {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer, subject, nil, nil, 0)
        let text = value.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        guard let extensionPointer = X509V3_EXT_conf_nid(nil, &context, nid, text) else {
            throw TLSError("building X.509 extension \(text)")
        }
        return extensionPointer
    }

    /// Adds an extension to a certificate (OpenSSL copies it).
    static func add(_ extensionPointer: OpaquePointer, to certificate: OpaquePointer) throws(TLSError) {
        guard X509_add_ext(certificate, extensionPointer, -1) == 1 else { throw TLSError("adding an X.509 extension") }
    }

    /// A random positive serial number of 159 bits, as RFC 5280 and the CA/B forum ask.
    static func setRandomSerial(_ certificate: OpaquePointer) throws(TLSError) {
        var bytes = [UInt8](repeating: 0, count: 20)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { throw TLSError("drawing a random serial number") }
        bytes[0] &= 0x7F
        bytes[0] |= 0x40
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw TLSError("encoding a serial number") }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else { throw TLSError("encoding a serial number") }
        defer { ASN1_INTEGER_free(serial) }
        guard X509_set_serialNumber(certificate, serial) == 1 else { throw TLSError("setting a serial number") }
    }

    /// Sets notBefore/notAfter relative to `now`.
    static func setValidity(_ certificate: OpaquePointer, from start: Date, until end: Date) throws(TLSError) {
        guard let notBefore = ASN1_TIME_set(nil, time_t(start.timeIntervalSince1970)) else {
            throw TLSError("encoding a time")
        }
        defer { ASN1_TIME_free(notBefore) }
        guard let notAfter = ASN1_TIME_set(nil, time_t(end.timeIntervalSince1970)) else {
            throw TLSError("encoding a time")
        }
        defer { ASN1_TIME_free(notAfter) }
        guard X509_set1_notBefore(certificate, notBefore) == 1, X509_set1_notAfter(certificate, notAfter) == 1 else {
            throw TLSError("setting the validity period")
        }
    }

    /// Appends `key=value` entries to a certificate name, in order.
    static func setName(_ name: OpaquePointer, _ entries: [(String, String)]) throws(TLSError) {
        for (key, value) in entries {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, key, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw TLSError("setting name entry \(key)")
            }
        }
    }
}
