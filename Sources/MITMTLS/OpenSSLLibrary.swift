import COpenSSL

/// Facts about the OpenSSL library linked at run time.
public enum OpenSSLLibrary {
    /// `OpenSSL 3.0.x ...` as the library reports it.
    public static var version: String {
        guard let text = OpenSSL_version(Int32(OPENSSL_VERSION)) else { return "OpenSSL (unknown version)" }
        return String(cString: text)
    }
}
