import Foundation

/// Reads the `<pin-set>`s of an Android `network_security_config.xml`.
///
/// Nested `<domain-config>`s inherit the pin-set and trust anchors of the nearest enclosing one
/// that sets them; `<base-config>` trust anchors apply where no domain-config sets its own.
enum NetworkSecurityConfigReader {
    static func read(_ data: Data, path: String) throws(PinsError) -> AppPinConfiguration {
        let root = try XMLTree.parse(data, path: path)
        guard root.name == "network-security-config" else {
            throw PinsError(
                "\(path) is not a network security config: its root element is <\(root.name)>, not <network-security-config>"
            )
        }
        let baseOverrides = root.children.first { $0.name == "base-config" }.flatMap(overridingSources) ?? []
        var domains: [PinnedDomain] = []
        for config in root.children where config.name == "domain-config" {
            collect(config, inheritedPins: nil, inheritedOverrides: baseOverrides, into: &domains)
        }
        guard !domains.isEmpty else {
            throw PinsError(
                "\(path) has no <pin-set> in any <domain-config>: this app pins nothing through its network security config"
            )
        }
        let debugAnchors = root.children.first { $0.name == "debug-overrides" }.map(anchors) ?? []
        let configs = root.children.filter { $0.name != "debug-overrides" }
        return AppPinConfiguration(
            path: path, kind: .androidNetworkSecurityConfig, domains: domains, debugOverrideAnchors: debugAnchors,
            releaseTrustsUserCAs: configs.contains(where: trustsUserCAs))
    }

    /// The `<certificates>` of the element's `<trust-anchors>`.
    private static func anchors(_ element: XMLTree.Element) -> [TrustAnchorSource] {
        let trustAnchors = element.children.filter { $0.name == "trust-anchors" }
        return trustAnchors.flatMap(\.children).filter { $0.name == "certificates" }.map {
            TrustAnchorSource(
                source: $0.attributes["src"] ?? "?",
                overridesPins: $0.attributes["overridePins"]?.lowercased() == "true")
        }
    }

    /// Whether the element or a nested `<domain-config>` trusts `src="user"`.
    private static func trustsUserCAs(_ element: XMLTree.Element) -> Bool {
        anchors(element).contains { $0.source == "user" }
            || element.children.contains { $0.name == "domain-config" && trustsUserCAs($0) }
    }

    private struct PinSet {
        var pins: [ConfiguredPin] = []
        var expiration: Date?
        var problems: [String] = []
    }

    private static func collect(
        _ config: XMLTree.Element, inheritedPins: PinSet?, inheritedOverrides: [String],
        into domains: inout [PinnedDomain]
    ) {
        let pinSet = config.children.first { $0.name == "pin-set" }.map(readPinSet) ?? inheritedPins
        let overrides = overridingSources(config) ?? inheritedOverrides
        if let pinSet {
            for domain in config.children where domain.name == "domain" {
                let name = domain.text.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !name.isEmpty else { continue }
                domains.append(
                    PinnedDomain(
                        name: name,
                        includesSubdomains: domain.attributes["includeSubdomains"]?.lowercased() == "true",
                        pins: pinSet.pins,
                        expiration: pinSet.expiration,
                        overridingSources: overrides,
                        problems: pinSet.problems
                    ))
            }
        }
        for child in config.children where child.name == "domain-config" {
            collect(child, inheritedPins: pinSet, inheritedOverrides: overrides, into: &domains)
        }
    }

    private static func readPinSet(_ element: XMLTree.Element) -> PinSet {
        var set = PinSet()
        if let text = element.attributes["expiration"] {
            if let date = DateText.parseDay(text) {
                set.expiration = date
            } else {
                set.problems.append(
                    "expiration=\"\(text)\" is not a yyyy-MM-dd date: Android rejects the configuration")
            }
        }
        for pin in element.children where pin.name == "pin" {
            let digest = pin.attributes["digest"] ?? ""
            let value = pin.text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard digest == "SHA-256" else {
                set.problems.append("pin \(value) has digest=\"\(digest)\": Android supports only SHA-256")
                continue
            }
            set.pins.append(ConfiguredPin(value: value, scope: .any))
        }
        if set.pins.isEmpty { set.problems.append("the <pin-set> has no SHA-256 <pin>") }
        return set
    }

    /// The `src` of each `<certificates overridePins="true">` in the element's `<trust-anchors>`,
    /// or nil when it has no trust anchors of its own.
    private static func overridingSources(_ element: XMLTree.Element) -> [String]? {
        guard let anchors = element.children.first(where: { $0.name == "trust-anchors" }) else { return nil }
        return anchors.children.filter {
            $0.name == "certificates" && $0.attributes["overridePins"]?.lowercased() == "true"
        }
        .map { $0.attributes["src"] ?? "?" }
    }
}
