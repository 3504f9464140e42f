import MITMCore
import MITMTLS

/// The names a forged leaf carries: the name the client asked for, plus the upstream certificate's
/// DNS and IP names that pass validation (SNI and certificates are untrusted input).
enum ForgeNames {
    static let maximumNames = 100

    static func names(primary: String, upstream: X509Certificate?) -> [SubjectAlternativeName] {
        var names: [SubjectAlternativeName] = [name(for: primary)]
        var seen: Set<SubjectAlternativeName> = Set(names)
        for alternative in upstream?.subjectAlternativeNames ?? [] where names.count < maximumNames {
            guard let usable = sanitized(alternative), seen.insert(usable).inserted else { continue }
            names.append(usable)
        }
        return names
    }

    static func name(for host: String) -> SubjectAlternativeName {
        if let address = IPAddressText.parse(host) { return .ipAddress(address) }
        return .dns(host)
    }

    private static func sanitized(_ name: SubjectAlternativeName) -> SubjectAlternativeName? {
        switch name {
        case .ipAddress: return name
        case .dns(let text):
            if text.hasPrefix("*.") {
                let rest = String(text.dropFirst(2))
                guard let valid = HostName.validate(rest), !HostName.isIPAddress(valid),
                    valid.split(separator: ".").count >= 2
                else { return nil }
                return .dns("*." + valid)
            }
            guard let valid = HostName.validate(text), !HostName.isIPAddress(valid) else { return nil }
            return .dns(valid)
        }
    }
}
