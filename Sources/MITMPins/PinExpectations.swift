import Foundation
import MITMCore

/// What `--expect-from FILE` reads from an app's own pin configuration: a `refused:` expectation per pinned
/// domain (and its subdomains when the entry includes them), `intercepted:` where the configuration itself
/// switches pinning off, and the configuration's mistakes, to be said before the run.
///
/// Subdomains follow each platform: ATS `NSIncludesSubdomains` covers one level (`*.example.org (one level)`),
/// Android `includeSubdomains` every level (`*.example.org`).
public struct PinExpectations: Sendable {
    /// The configuration file read.
    public let file: String
    /// One expectation per pinned domain (two with subdomains), in file order, each naming its source.
    public let expectations: [Expectation]
    /// Mistakes in the configuration (an expired pin-set, one pin without a backup, pins that cannot be SPKI hashes).
    public let warnings: [String]
    /// Facts about the configuration that decide what a run can prove (debug overrides, user trust anchors).
    public let notes: [String]

    /// Reads `path` (an `Info.plist` or a `network_security_config.xml`) and judges dates at `now`.
    public static func read(_ path: String, now: Date = Date()) throws(PinsError) -> PinExpectations {
        PinExpectations(try AppPinConfiguration.read(path), now: now)
    }

    /// The expectations and warnings of `configuration`, with dates judged at `now`.
    public init(_ configuration: AppPinConfiguration, now: Date) {
        file = configuration.path
        var expectations: [Expectation] = []
        var warnings: [String] = []
        for domain in configuration.domains {
            let place = "\(configuration.path) (domain \(domain.name))"
            guard let exact = try? HostPattern(domain.name) else {
                warnings.append("\(place): \(domain.name.debugDescription) is not a host name; no expectation for it")
                continue
            }
            let (outcome, note) = Self.outcome(domain, kind: configuration.kind, now: now)
            let source = ExpectationSource(file: configuration.path, domain: domain.name, note: note)
            expectations.append(Expectation(outcome, exact, source: source))
            if domain.includesSubdomains, let below = Self.subdomains(of: exact, kind: configuration.kind) {
                expectations.append(Expectation(outcome, below, source: source))
            }
            warnings += Self.mistakes(domain, kind: configuration.kind, file: configuration.path, now: now).map {
                "\(place): \($0)"
            }
        }
        self.expectations = expectations
        self.warnings = warnings
        notes = Self.notes(configuration)
    }

    /// `refused`, unless the configuration itself turns the pins off for a user-installed CA like the proxy's.
    private static func outcome(_ domain: PinnedDomain, kind: PinConfigurationKind, now: Date) -> (
        Expectation.Outcome, String?
    ) {
        if let expiration = domain.expiration, expiration <= now {
            return (
                .intercepted,
                "pin-set expired on \(DateText.day(expiration)): Android no longer enforces it, so the domain is not pinned"
            )
        }
        if domain.overridingSources.contains("user") {
            return (
                .intercepted,
                "trust anchors src=\"user\" have overridePins=\"true\": a user-installed CA such as mitm-proxy's skips these pins"
            )
        }
        return (.refused, nil)
    }

    private static func subdomains(of exact: HostPattern, kind: PinConfigurationKind) -> HostPattern? {
        switch kind {
        case .ats: HostPattern.oneLevel(below: exact)
        case .androidNetworkSecurityConfig: try? HostPattern("*." + exact.description)
        }
    }

    /// What `pins check` says about the entry that needs no certificate chain, and pins that cannot be SPKI hashes.
    private static func mistakes(_ domain: PinnedDomain, kind: PinConfigurationKind, file: String, now: Date)
        -> [String]
    {
        let results = domain.pins.map { pin in
            PinMatchResult(pin: pin, matches: [], outOfScope: [], problem: PinValue(pin.value, chain: []).problem)
        }
        let noChain = CertificateChain(source: file, served: false, elements: [])
        let rotation = RotationWarnings(domain: domain, kind: kind, chain: noChain, results: results, now: now).all.map(
            \.message)
        let unusable = results.compactMap { result in
            result.problem.map { "pin \(result.pin.value.debugDescription) cannot be an SPKI SHA-256 hash: \($0)" }
        }
        return rotation + unusable
    }

    private static func notes(_ configuration: AppPinConfiguration) -> [String] {
        guard configuration.kind == .androidNetworkSecurityConfig else { return [] }
        var notes: [String] = []
        let debugUser = configuration.debugOverrideAnchors.filter { $0.source == "user" }
        if debugUser.contains(where: \.overridesPins) {
            notes.append(
                "\(configuration.path): <debug-overrides> trusts user CAs with overridePins=\"true\": a debuggable build skips every "
                    + "pin-set for mitm-proxy's CA, so pinned domains show intercepted there; test a build that keeps its pins"
            )
        } else if !debugUser.isEmpty {
            notes.append(
                "\(configuration.path): <debug-overrides> trusts user CAs: a debuggable build accepts mitm-proxy's CA and keeps its pins"
            )
        }
        if !configuration.releaseTrustsUserCAs {
            notes.append(
                "\(configuration.path): no <trust-anchors> outside <debug-overrides> has src=\"user\": a release build (targeting "
                    + "API 24 or later) refuses every host signed by a user-installed CA, pinned or not, so only a control host can prove anything"
            )
        }
        return notes
    }
}
