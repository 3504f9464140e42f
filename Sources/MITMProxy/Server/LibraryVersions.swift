import CNGHTTP2
import MITMCore
import MITMTLS

/// Versions of the C libraries the proxy runs on, for `--version` and bug reports.
public enum LibraryVersions {
    /// mitm-proxy's own version.
    public static let mitmProxy = ProductVersion.mitmProxy

    /// The nghttp2 library version linked at run time.
    public static var nghttp2: String {
        guard let info = nghttp2_version(0), let text = info.pointee.version_str else { return "unknown" }
        return String(cString: text)
    }

    /// One line naming mitm-proxy, OpenSSL and nghttp2 versions.
    public static var summary: String {
        "mitm-proxy \(mitmProxy) (\(OpenSSLLibrary.version), nghttp2 \(nghttp2))"
    }
}
