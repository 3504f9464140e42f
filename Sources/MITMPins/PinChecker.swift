import Foundation

/// How one configured pin fared against the chain.
public struct PinMatchResult: Sendable {
    /// The pin as configured.
    public let pin: ConfiguredPin
    /// The chain elements it matches, within its scope.
    public let matches: [ChainElement]
    /// Elements it matches that its scope excludes (an ATS leaf pin on a CA, or the reverse).
    public let outOfScope: [ChainElement]
    /// Why it cannot match, or what it really is, when it matches nothing.
    public let problem: String?
}

/// The verdict for one pinned domain.
public struct DomainCheck: Sendable {
    /// The domain entry checked.
    public let domain: PinnedDomain
    /// Each pin's result, in configuration order.
    public let pins: [PinMatchResult]
    /// Whether the chain satisfies the entry (ATS: a match in each list present; Android: any pin).
    public let matched: Bool
    /// Rotation risks and configuration problems.
    public let warnings: [PinWarning]
}

/// Compares an app's pinned domains with a chain, as ATS and Android would, and finds rotation risks.
public enum PinChecker {
    /// Days within which an expiring certificate or pin-set is a warning.
    public static let soonDays = 30

    /// Checks `domain`, from a configuration of `kind`, against `chain`, with dates judged at `now`.
    public static func check(
        _ domain: PinnedDomain, kind: PinConfigurationKind, against chain: CertificateChain, now: Date
    ) -> DomainCheck {
        let elements = chain.elements
        let results = domain.pins.map { result(for: $0, in: elements) }
        let matched: Bool
        switch kind {
        case .ats:
            let leafOK = !domain.requiresLeafMatch || results.contains { $0.pin.scope == .leaf && !$0.matches.isEmpty }
            let caOK = !domain.requiresCAMatch || results.contains { $0.pin.scope == .ca && !$0.matches.isEmpty }
            matched = (domain.requiresLeafMatch || domain.requiresCAMatch) && leafOK && caOK
        case .androidNetworkSecurityConfig:
            matched = results.contains { !$0.matches.isEmpty }
        }
        let warnings = RotationWarnings(domain: domain, kind: kind, chain: chain, results: results, now: now).all
        return DomainCheck(domain: domain, pins: results, matched: matched, warnings: warnings)
    }

    private static func result(for pin: ConfiguredPin, in elements: [ChainElement]) -> PinMatchResult {
        let value = PinValue(pin.value, chain: elements)
        guard let canonical = value.canonical else {
            return PinMatchResult(pin: pin, matches: [], outOfScope: [], problem: value.problem)
        }
        let all = elements.filter { $0.pin == canonical }
        let inScope = all.filter { element in
            switch pin.scope {
            case .leaf: return element.position == .leaf
            case .ca: return element.position.isCA
            case .any: return true
            }
        }
        let outOfScope = all.filter { element in !inScope.contains { $0.index == element.index } }
        var problem: String?
        if inScope.isEmpty, let wrong = outOfScope.first {
            problem =
                pin.scope == .leaf
                ? "matches \(wrong.label), but NSPinnedLeafIdentities is compared only with the leaf: move it to NSPinnedCAIdentities"
                : "matches \(wrong.label), but NSPinnedCAIdentities is compared only with intermediates and roots: move it to NSPinnedLeafIdentities"
        } else if all.isEmpty {
            problem = PinValue.misuse(canonical, chain: elements)
        }
        return PinMatchResult(pin: pin, matches: inScope, outOfScope: outOfScope, problem: problem)
    }
}
