/// What the proxy knows of a TLS tunnel when it decides what to do with it: after the ClientHello,
/// before anything has been sent upstream.
public struct TunnelFacts: Sendable, Equatable {
    /// The CONNECT target's host.
    public var connectHost: String
    /// The CONNECT target's port.
    public var connectPort: Int
    /// The SNI, when the client sent a valid one.
    public var serverName: String?
    /// The client's ALPN offer, in its order.
    public var offeredALPN: [String]
    /// The client's address (`127.0.0.1:50123`).
    public var client: String

    /// The facts of one tunnel.
    public init(connectHost: String, connectPort: Int, serverName: String?, offeredALPN: [String], client: String) {
        self.connectHost = connectHost
        self.connectPort = connectPort
        self.serverName = serverName
        self.offeredALPN = offeredALPN
        self.client = client
    }

    /// The name the client asked for: its SNI, or the CONNECT host without one.
    public var host: String { serverName ?? connectHost }
}

/// The one decision made per TLS tunnel.
public enum TunnelDecision: Sendable, Equatable {
    /// Terminate TLS with a certificate of `profile`, relay and judge the client (the default, with `.trusted`).
    case intercept(CertificateProfile)
    /// Relay the tunnel's bytes untouched: no certificate forged, no verdict (a host the user excluded).
    case passThrough
    /// Close the tunnel without a word to the upstream; `reason` goes to the log.
    case refuse(reason: String)

    /// The certificate profile of an interception.
    public var profile: CertificateProfile? {
        if case .intercept(let profile) = self { return profile }
        return nil
    }
}

/// Decides, per TLS tunnel, whether to intercept it, pass it through or refuse it. Host lists (and the
/// certificate profiles of the audit) plug in here.
public struct TunnelPolicy: Sendable {
    /// Hosts whose tunnels pass through untouched (`--ignore-hosts`, as mitmproxy calls it).
    public var passThroughHosts: [HostPattern]
    /// Which certificate each host is shown (`--attack`); the `passthrough` profile relays the tunnel.
    public var profileRules: [CertificateProfileRule]

    /// Intercepts everything except `passThroughHosts`, with the certificate `profileRules` choose (`trusted` by default).
    public init(passThroughHosts: [HostPattern] = [], profileRules: [CertificateProfileRule] = []) {
        self.passThroughHosts = passThroughHosts
        self.profileRules = profileRules
    }

    /// The PEM key files of the `key:FILE` profiles in the rules.
    public var keyFiles: [String] {
        profileRules.compactMap(\.keyFile)
    }

    /// The decision for a tunnel with `facts`: a pattern matches the SNI or the CONNECT host.
    public func decide(_ facts: TunnelFacts) -> TunnelDecision {
        let names = [facts.serverName, facts.connectHost].compactMap { $0 }
        if passThroughHosts.contains(where: { pattern in names.contains { pattern.matches($0) } }) { return .passThrough }
        let profile = CertificateProfileRule.profile(for: names, in: profileRules)
        return profile == .passthrough ? .passThrough : .intercept(profile)
    }
}
