import Foundation

/// Which kind of file an app ships its pins in.
public enum PinConfigurationKind: String, Codable, Sendable {
    /// An iOS/macOS `Info.plist` with `NSAppTransportSecurity` > `NSPinnedDomains`.
    case ats
    /// An Android `network_security_config.xml` with `<pin-set>`s.
    case androidNetworkSecurityConfig = "android-nsc"

    /// `App Transport Security (Info.plist)`, `Android network security config`.
    public var displayName: String {
        switch self {
        case .ats: return "App Transport Security (Info.plist NSPinnedDomains)"
        case .androidNetworkSecurityConfig: return "Android network security config"
        }
    }
}

/// Which certificates of a chain a pin is compared with.
public enum PinScope: String, Codable, Sendable {
    /// Only the leaf (ATS `NSPinnedLeafIdentities`).
    case leaf
    /// Only intermediates and roots (ATS `NSPinnedCAIdentities`).
    case ca
    /// Any certificate of the chain (Android, OkHttp, TrustKit).
    case any
}

/// One pin as the app ships it.
public struct ConfiguredPin: Sendable, Equatable, Codable {
    /// The value as written (ideally base64 of 32 bytes).
    public let value: String
    /// Which certificates it may match.
    public let scope: PinScope

    /// A pin `value` compared with `scope`.
    public init(value: String, scope: PinScope) {
        self.value = value
        self.scope = scope
    }
}

/// One pinned domain entry of an app's configuration.
public struct PinnedDomain: Sendable, Equatable {
    /// The domain name as configured.
    public let name: String
    /// Whether subdomains are covered (ATS: one level; Android: every level).
    public let includesSubdomains: Bool
    /// The pins, in file order.
    public let pins: [ConfiguredPin]
    /// ATS only: whether `NSPinnedLeafIdentities` is present (then a leaf pin must match).
    public let requiresLeafMatch: Bool
    /// ATS only: whether `NSPinnedCAIdentities` is present (then a CA pin must match).
    public let requiresCAMatch: Bool
    /// Android only: the pin-set's `expiration` day, when set and readable.
    public let expiration: Date?
    /// Android only: trust-anchor sources with `overridePins="true"` that apply to this domain.
    public let overridingSources: [String]
    /// Problems found in this domain's entry (malformed values, unreadable dates).
    public let problems: [String]

    /// A domain entry.
    public init(
        name: String, includesSubdomains: Bool, pins: [ConfiguredPin], requiresLeafMatch: Bool = false,
        requiresCAMatch: Bool = false, expiration: Date? = nil, overridingSources: [String] = [],
        problems: [String] = []
    ) {
        self.name = name
        self.includesSubdomains = includesSubdomains
        self.pins = pins
        self.requiresLeafMatch = requiresLeafMatch
        self.requiresCAMatch = requiresCAMatch
        self.expiration = expiration
        self.overridingSources = overridingSources
        self.problems = problems
    }
}

/// One `<certificates>` of an Android `<trust-anchors>`.
public struct TrustAnchorSource: Sendable, Equatable {
    /// `system`, `user`, or a raw resource (`@raw/my_ca`).
    public let source: String
    /// Whether chains ending at it skip pinning (`overridePins="true"`).
    public let overridesPins: Bool

    /// An anchor.
    public init(source: String, overridesPins: Bool) {
        self.source = source
        self.overridesPins = overridesPins
    }
}

/// The pins an app ships: read from an `Info.plist` (XML or binary) or a `network_security_config.xml`.
public struct AppPinConfiguration: Sendable {
    /// The file read.
    public let path: String
    /// ATS or Android.
    public let kind: PinConfigurationKind
    /// The pinned domains, in file order (ATS: sorted by name).
    public let domains: [PinnedDomain]
    /// Android only: the trust anchors of `<debug-overrides>` (added in debuggable builds only).
    public let debugOverrideAnchors: [TrustAnchorSource]
    /// Android only: whether some `<trust-anchors>` outside `<debug-overrides>` trusts user-installed CAs.
    public let releaseTrustsUserCAs: Bool

    /// A configuration made in code.
    public init(
        path: String, kind: PinConfigurationKind, domains: [PinnedDomain],
        debugOverrideAnchors: [TrustAnchorSource] = [],
        releaseTrustsUserCAs: Bool = false
    ) {
        self.path = path
        self.kind = kind
        self.domains = domains
        self.debugOverrideAnchors = debugOverrideAnchors
        self.releaseTrustsUserCAs = releaseTrustsUserCAs
    }

    /// Reads `path`, telling an `Info.plist` from an Android config by its content.
    public static func read(_ path: String) throws(PinsError) -> AppPinConfiguration {
        let bytes = try FileBytes.read(path, what: "pin configuration", limit: PropertyList.maximumBytes)
        return try parse(bytes, path: path)
    }

    /// Parses the bytes of a file read from `path` (used in messages only).
    public static func parse(_ bytes: [UInt8], path: String) throws(PinsError) -> AppPinConfiguration {
        if bytes.starts(with: Array("bplist".utf8)) { return try ATSPlistReader.read(Data(bytes), path: path) }
        let text = String(decoding: bytes.prefix(64 * 1024), as: UTF8.self)
        if text.contains("<network-security-config") {
            return try NetworkSecurityConfigReader.read(Data(bytes), path: path)
        }
        if text.contains("<plist") || text.contains("<!DOCTYPE plist") {
            return try ATSPlistReader.read(Data(bytes), path: path)
        }
        throw PinsError("\(path) is neither an Info.plist (XML or binary) nor an Android network_security_config.xml")
    }

    /// The entries that apply to `host`: the most specific domain that covers it, as ATS and Android pick.
    public func domains(covering host: String) -> [PinnedDomain] {
        let name = host.lowercased()
        let covering = domains.filter { domain in
            let configured = domain.name.lowercased()
            if configured == name { return true }
            guard domain.includesSubdomains, name.hasSuffix("." + configured) else { return false }
            let prefix = name.dropLast(configured.count + 1)
            return kind == .androidNetworkSecurityConfig || !prefix.contains(".")
        }
        guard let longest = covering.map(\.name.count).max() else { return [] }
        return covering.filter { $0.name.count == longest }
    }
}
