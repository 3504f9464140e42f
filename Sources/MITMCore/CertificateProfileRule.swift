/// `--attack PROFILE` (every host) or `--attack HOST=PROFILE` (hosts matching a pattern).
public struct CertificateProfileRule: Sendable, Equatable, CustomStringConvertible {
    /// The hosts the rule covers (`*` for `--attack PROFILE`).
    public let pattern: HostPattern
    /// The certificate they are shown.
    public let profile: CertificateProfile

    /// A rule showing `profile` to hosts matching `pattern`.
    public init(pattern: HostPattern, profile: CertificateProfile) {
        self.pattern = pattern
        self.profile = profile
    }

    /// Parses `PROFILE` or `HOST=PROFILE` (`key:FILE` is a profile even when FILE contains `=`).
    public init(parsing text: String) throws(CertificateProfileError) {
        let split = text.hasPrefix("key:") ? nil : text.firstIndex(of: "=")
        do {
            let pattern = try split.map { try HostPattern(String(text[..<$0])) } ?? .everyHost
            let profile = try CertificateProfile(parsing: split.map { String(text[text.index(after: $0)...]) } ?? text)
            self.init(pattern: pattern, profile: profile)
        } catch {
            throw CertificateProfileError("--attack \(text): \(error)")
        }
    }

    public var description: String { "\(pattern)=\(profile)" }

    /// The PEM key file of a `key:FILE` rule.
    public var keyFile: String? {
        if case .key(let path) = profile { return path }
        return nil
    }

    /// The profile for a tunnel known by `names` (SNI, CONNECT host): the most specific matching rule decides,
    /// the later of two equally specific ones; `.trusted` when none matches.
    public static func profile(for names: [String], in rules: [CertificateProfileRule]) -> CertificateProfile {
        var best: (specificity: Int, profile: CertificateProfile)?
        for rule in rules where names.contains(where: rule.pattern.matches) {
            if best == nil || rule.pattern.specificity >= best!.specificity {
                best = (rule.pattern.specificity, rule.profile)
            }
        }
        return best?.profile ?? .trusted
    }
}

extension HostPattern {
    /// `*`: every host.
    public static let everyHost: HostPattern = {
        do { return try HostPattern("*") } catch { preconditionFailure("* is a valid pattern") }
    }()
}
