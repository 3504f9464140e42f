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
    /// When not empty, the only hosts intercepted (`--intercept-hosts`); every other tunnel passes through.
    public var interceptHosts: [HostPattern]
    /// Which certificate each host is shown (`--attack`); the `passthrough` profile relays the tunnel.
    public var profileRules: [CertificateProfileRule]

    /// Intercepts `interceptHosts` (every host when empty) except `passThroughHosts`, with the certificate
    /// `profileRules` choose (`trusted` by default).
    public init(
        passThroughHosts: [HostPattern] = [], interceptHosts: [HostPattern] = [],
        profileRules: [CertificateProfileRule] = []
    ) {
        self.passThroughHosts = passThroughHosts
        self.interceptHosts = interceptHosts
        self.profileRules = profileRules
    }

    /// The PEM key files of the `key:FILE` profiles in the rules.
    public var keyFiles: [String] {
        profileRules.compactMap(\.keyFile)
    }

    /// The decision for a tunnel with `facts`: a pattern matches the SNI or the CONNECT host.
    public func decide(_ facts: TunnelFacts) -> TunnelDecision {
        // No lists and no rules (the usual run): every tunnel is intercepted with the trusted certificate.
        if passThroughHosts.isEmpty && interceptHosts.isEmpty && profileRules.isEmpty { return .intercept(.trusted) }
        let names = [facts.serverName, facts.connectHost].compactMap { $0 }
        guard hostListsIntercept(names) else { return .passThrough }
        let profile = CertificateProfileRule.profile(for: names, in: profileRules)
        return profile == .passthrough ? .passThrough : .intercept(profile)
    }

    /// Whether the host lists let a tunnel known by `names` (SNI, CONNECT host) be intercepted. The most
    /// specific matching pattern of either list decides, as for `--expect`: `--ignore-hosts '*.bank.test'
    /// --intercept-hosts api.bank.test` intercepts `api.bank.test` alone under `bank.test`. A host no pattern
    /// matches is intercepted unless an intercept list was given.
    public func hostListsIntercept(_ names: [String]) -> Bool {
        let ignored = Self.bestSpecificity(of: passThroughHosts, matching: names)
        let intercepted = Self.bestSpecificity(of: interceptHosts, matching: names)
        switch (ignored, intercepted) {
        case (nil, nil): return interceptHosts.isEmpty
        case (_?, nil): return false
        case (nil, _?): return true
        case (let ignored?, let intercepted?): return intercepted > ignored
        }
    }

    /// Patterns given to both lists: they say opposite things about the same hosts.
    public var contradictoryPatterns: [HostPattern] {
        passThroughHosts.filter { interceptHosts.contains($0) }
    }

    /// Whether the host lists pass through every host `pattern` matches (for a wildcard: its ordinary subdomains,
    /// and every narrower intercept pattern inside it), so that an expectation on it can never get a verdict.
    public func hostListsPassThrough(_ pattern: HostPattern) -> Bool {
        let hosts =
            [pattern.representativeHost] + interceptHosts.map(\.representativeHost).filter { pattern.matches($0) }
        return !hosts.contains { hostListsIntercept([$0]) }
    }

    private static func bestSpecificity(of patterns: [HostPattern], matching names: [String]) -> Int? {
        patterns.filter { pattern in names.contains { pattern.matches($0) } }.map(\.specificity).max()
    }
}
