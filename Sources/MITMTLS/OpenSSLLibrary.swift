import COpenSSL

/// Facts about the OpenSSL library linked at run time.
public enum OpenSSLLibrary {
    /// `OpenSSL 3.0.x ...` as the library reports it.
    public static var version: String {
        guard let text = OpenSSL_version(Int32(OPENSSL_VERSION)) else { return "OpenSSL (unknown version)" }
        return String(cString: text)
    }

    /// Keeps OpenSSL's state until the process is gone instead of freeing it from an `atexit` handler: a program that
    /// exits while its loops still hold TLS connections would otherwise have that state freed under them (an abort at
    /// exit). For a program's `main`, before any other OpenSSL call; an embedding application decides for itself.
    public static func keepStateUntilProcessExit() {
        OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
