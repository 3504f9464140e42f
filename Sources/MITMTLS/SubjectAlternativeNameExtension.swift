import COpenSSL

/// Builds subjectAltName structurally (GENERAL_NAME by GENERAL_NAME): host names come from the
/// network, and OpenSSL's config syntax would let a crafted name inject other entries.
enum SubjectAlternativeNameExtension {
    static func add(_ names: [SubjectAlternativeName], critical: Bool, to certificate: OpaquePointer) throws(TLSError) {
        guard let stack = GENERAL_NAMES_new() else { throw TLSError("allocating subjectAltName") }
        defer { GENERAL_NAMES_free(stack) }
        for name in names {
            guard let general = GENERAL_NAME_new() else { throw TLSError("allocating a subjectAltName entry") }
            let (type, bytes): (Int32, [UInt8]) =
                switch name {
                case .dns(let host): (GEN_DNS, Array(host.utf8))
                case .ipAddress(let address): (GEN_IPADD, address)
                }
            guard let value = ASN1_STRING_type_new(type == GEN_DNS ? V_ASN1_IA5STRING : V_ASN1_OCTET_STRING),
                ASN1_STRING_set(value, bytes, Int32(bytes.count)) == 1
            else {
                GENERAL_NAME_free(general)
                throw TLSError("encoding subjectAltName entry \(name)")
            }
            GENERAL_NAME_set0_value(general, type, UnsafeMutableRawPointer(value))
            guard OPENSSL_sk_push(stack, general) > 0 else {
                GENERAL_NAME_free(general)
                throw TLSError("collecting subjectAltName entries")
            }
        }
        guard
            X509_add1_ext_i2d(certificate, NID_subject_alt_name, UnsafeMutableRawPointer(stack), critical ? 1 : 0, 0)
                == 1
        else {
            throw TLSError("adding subjectAltName")
        }
    }
}
