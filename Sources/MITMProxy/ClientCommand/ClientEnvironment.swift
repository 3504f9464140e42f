import Foundation

/// What a client run through the proxy finds in its environment: the proxy's URL in the proxy variables common clients
/// read (curl, Python, Go, Node, ...), the proxy CA's path in their CA-bundle variables, and no `NO_PROXY`. The
/// `mitm-proxy` CLI gives its client command exactly this; a test gives it to the client it starts
/// (`ProxyServer.clientEnvironment`).
public struct ClientEnvironment: Sendable, Equatable {
    /// `http://127.0.0.1:PORT`, with `USER:PASSWORD@` when the proxy asks for credentials.
    public let proxyURL: String
    /// The proxy's port.
    public let proxyPort: Int
    /// The proxy CA certificate (PEM) the client must trust.
    public let caCertificatePath: String
    /// The system's trusted roots plus the proxy CA, for the variables that replace a client's trust store.
    public let trustBundlePath: String

    /// The variables that name the proxy.
    public static let proxyVariables = [
        "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy",
    ]
    /// The variables that replace a client's trust store (OpenSSL's, curl's, Python requests'): the system's roots plus
    /// the proxy CA, so that hosts the proxy leaves alone still validate.
    public static let bundleVariables = ["SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE"]
    /// The variables that name the proxy CA alone (Node adds `NODE_EXTRA_CA_CERTS` to its own roots).
    public static let caVariables = ["NODE_EXTRA_CA_CERTS", "MITM_PROXY_CA"]
    /// The variables removed: everything must go through the proxy, or a pinned host would be `unseen`.
    public static let removedVariables = ["NO_PROXY", "no_proxy"]

    /// The environment for a proxy reached at `proxyHost` (an IPv6 address is bracketed in the URL) and `proxyPort`.
    /// `trustBundlePath`: the system's roots plus the proxy CA (`caCertificatePath` when there is no such file).
    public init(
        proxyHost: String = "127.0.0.1", proxyPort: Int, caCertificatePath: String, trustBundlePath: String? = nil,
        credentials: ProxyCredentials? = nil
    ) {
        let host = proxyHost.contains(":") ? "[\(proxyHost)]" : proxyHost
        proxyURL = "http://\(credentials.map { $0.urlUserInfo + "@" } ?? "")\(host):\(proxyPort)"
        self.proxyPort = proxyPort
        self.caCertificatePath = caCertificatePath
        self.trustBundlePath = trustBundlePath ?? caCertificatePath
    }

    /// Every variable set: the proxy variables (`proxyURL`), the bundle variables (`trustBundlePath`), the CA variables
    /// (`caCertificatePath`) and `MITM_PROXY_PORT`.
    public var variables: [String: String] {
        var variables: [String: String] = ["MITM_PROXY_PORT": String(proxyPort)]
        for name in Self.proxyVariables { variables[name] = proxyURL }
        for name in Self.caVariables { variables[name] = caCertificatePath }
        for name in Self.bundleVariables { variables[name] = trustBundlePath }
        return variables
    }

    /// `environment` (by default this process's) with `variables` set and `removedVariables` removed: what to give a
    /// client process.
    public func applied(to environment: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var result = environment
        for name in Self.removedVariables { result.removeValue(forKey: name) }
        result.merge(variables) { _, set in set }
        return result
    }

    /// `environment` for a client command under `--capture`: the CA variables set, and no proxy variables at all (its
    /// connections reach the proxy without them, and 127.0.0.1 inside its network namespace is not the proxy).
    public func appliedUnderCapture(to environment: [String: String] = ProcessInfo.processInfo.environment) -> [String:
        String]
    {
        var result = environment
        for name in Self.removedVariables + Self.proxyVariables { result.removeValue(forKey: name) }
        for name in Self.caVariables { result[name] = caCertificatePath }
        for name in Self.bundleVariables { result[name] = trustBundlePath }
        return result
    }
}
