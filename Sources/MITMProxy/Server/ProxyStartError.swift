/// Why a proxy could not be made (`ProxyServer.init(configuration:)`, `ProxyServer.forTesting`). `description` says what
/// failed and what to change; it names the `mitm-proxy` flag behind each configuration setting (`--upstream-ca` for
/// `upstreamCAFiles`, `--rules` for `rulesFile`, `--reverse` for `reverseTargets`).
public enum ProxyStartError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A setting is out of range (a timeout or the silence window): `problem` names it and the allowed range.
    case invalidConfiguration(problem: String)
    /// The CA in `directory` could not be read, created or locked (another proxy may be using it).
    case certificateAuthority(directory: String, reason: String)
    /// OpenSSL could not make the TLS contexts or the certificate forger.
    case tlsSetup(reason: String)
    /// A key file for a certificate profile (`tunnelPolicy.keyFiles`) could not be used.
    case certificateProfiles(reason: String)
    /// The upstream CA file at `path` (`upstreamCAFiles`) is missing or holds no certificate.
    case upstreamCAFile(path: String, reason: String)
    /// The upstream CA files could not be loaded together.
    case upstreamCAFiles(reason: String)
    /// The rules file (`rulesFile`) is missing or invalid; `reason` names the file and the faulty rule.
    case rulesFile(reason: String)
    /// The proxy's port could not be bound (in use, or an address this machine does not have).
    case listen(reason: String)
    /// The web UI's own port (`webUI.port`) could not be bound.
    case webUIListen(reason: String)
    /// The local port in front of the reverse-proxied origin `url` could not be bound.
    case reverseListen(url: String, reason: String)
    /// The transparent listener (`transparentPort`) could not be bound.
    case transparentListen(reason: String)
    /// The captured command's DNS responder could not start.
    case captureDNS(reason: String)

    /// What failed and why, in words.
    public var description: String {
        switch self {
        case .invalidConfiguration(let problem): problem
        case .certificateAuthority(_, let reason): reason
        case .tlsSetup(let reason): "cannot set up TLS: \(reason)"
        case .certificateProfiles(let reason): reason
        case .upstreamCAFile(let path, let reason): "--upstream-ca \(path): \(reason)"
        case .upstreamCAFiles(let reason): "cannot load upstream CA files: \(reason)"
        case .rulesFile(let reason): "--rules \(reason)"
        case .listen(let reason): reason
        case .webUIListen(let reason): "web UI: \(reason)"
        case .reverseListen(let url, let reason): "--reverse \(url): \(reason)"
        case .transparentListen(let reason): "--transparent-port: \(reason)"
        case .captureDNS(let reason): "DNS responder: \(reason)"
        }
    }

    /// The same as `description`.
    public var message: String { description }
}
