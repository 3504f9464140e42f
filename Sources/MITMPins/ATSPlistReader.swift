import Foundation

/// Reads `NSAppTransportSecurity` > `NSPinnedDomains` from an `Info.plist`, XML or binary.
enum ATSPlistReader {
    static func read(_ data: Data, path: String) throws(PinsError) -> AppPinConfiguration {
        guard case .dictionary(let top) = try PropertyList.read([UInt8](data), path: path) else {
            throw PinsError("\(path) is a property list but not a dictionary, so not an Info.plist")
        }
        guard case .dictionary(let ats)? = top["NSAppTransportSecurity"] else {
            throw PinsError(
                "\(path) has no NSAppTransportSecurity dictionary: there are no ATS pins to check (pass the app's Info.plist, or its network_security_config.xml for Android)"
            )
        }
        guard case .dictionary(let pinned)? = ats["NSPinnedDomains"], !pinned.isEmpty else {
            throw PinsError(
                "\(path) has NSAppTransportSecurity but no NSPinnedDomains entries: this app pins nothing through ATS")
        }
        let domains = pinned.keys.sorted().map { name in domain(name, pinned[name], path: path) }
        return AppPinConfiguration(path: path, kind: .ats, domains: domains)
    }

    private static func domain(_ name: String, _ value: PropertyList?, path: String) -> PinnedDomain {
        guard case .dictionary(let entry)? = value else {
            return PinnedDomain(
                name: name, includesSubdomains: false, pins: [],
                problems: ["the entry is not a dictionary, so ATS cannot use it"])
        }
        var problems: [String] = []
        var includes = false
        if let flag = entry["NSIncludesSubdomains"] {
            if case .boolean(let bool) = flag {
                includes = bool
            } else {
                problems.append("NSIncludesSubdomains is not a boolean")
            }
        }
        let leaf = identities("NSPinnedLeafIdentities", in: entry, scope: .leaf, problems: &problems)
        let ca = identities("NSPinnedCAIdentities", in: entry, scope: .ca, problems: &problems)
        if leaf == nil && ca == nil {
            problems.append("neither NSPinnedLeafIdentities nor NSPinnedCAIdentities is set: ATS requires at least one")
        }
        return PinnedDomain(
            name: name, includesSubdomains: includes, pins: (leaf ?? []) + (ca ?? []),
            requiresLeafMatch: leaf != nil, requiresCAMatch: ca != nil, problems: problems)
    }

    /// The pins under `key`, or nil when the key is absent.
    private static func identities(
        _ key: String, in entry: [String: PropertyList], scope: PinScope, problems: inout [String]
    ) -> [ConfiguredPin]? {
        guard let value = entry[key] else { return nil }
        guard case .array(let array) = value else {
            problems.append("\(key) is not an array")
            return []
        }
        if array.isEmpty { problems.append("\(key) is empty: nothing can match it") }
        var pins: [ConfiguredPin] = []
        for (index, item) in array.enumerated() {
            guard case .dictionary(let dictionary) = item, case .string(let pin)? = dictionary["SPKI-SHA256-BASE64"]
            else {
                problems.append("\(key) item \(index) has no SPKI-SHA256-BASE64 string")
                continue
            }
            pins.append(ConfiguredPin(value: pin, scope: scope))
        }
        return pins
    }
}
