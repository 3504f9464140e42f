import Foundation

/// The rotation risks and configuration problems of one checked domain.
struct RotationWarnings {
    let domain: PinnedDomain
    let kind: PinConfigurationKind
    let chain: CertificateChain
    let results: [PinMatchResult]
    let now: Date

    var all: [PinWarning] {
        domain.problems.map { PinWarning(.configuration, $0) }
            + [pinCount, expiringPins, leafPins, pinSetExpiry, overridePins, rootNotInChain].compactMap { $0 }
    }

    private var usablePins: Set<String> {
        Set(results.compactMap { PinValue($0.pin.value, chain: []).canonical })
    }

    private var matchedElements: [ChainElement] {
        var seen = Set<Int>()
        return results.flatMap(\.matches).filter { seen.insert($0.index).inserted }.sorted { $0.index < $1.index }
    }

    private var pinCount: PinWarning? {
        switch usablePins.count {
        case 0:
            return PinWarning(.noPins, "no usable pin: nothing can match this domain, so every connection to it fails")
        case 1:
            return PinWarning(
                .singlePin,
                "only one pin and no backup: when that key changes (a renewal with a new key, a move to another CA), every installed app stops connecting until it is updated; ship a backup pin for a spare key kept offline, or for the CA"
            )
        default:
            return nil
        }
    }

    private var expiringPins: PinWarning? {
        let matched = matchedElements
        guard !matched.isEmpty, matched.allSatisfy({ $0.daysLeft <= PinChecker.soonDays }) else { return nil }
        let list = matched.map {
            "\($0.label), not after \(DateText.day($0.notAfter)) (\(DateText.daysLeft($0.daysLeft)))"
        }
        .joined(separator: "; ")
        let others = usablePins.count - Set(matched.map(\.pin)).count
        let rescue =
            others > 0
            ? "or one of the \(others) other pin\(others == 1 ? "" : "s") is the new key"
            : "(there is no other pin)"
        return PinWarning(
            .expiringPins,
            "every pin that matches is on a certificate that expires within \(PinChecker.soonDays) days (\(list)): on renewal day installed apps stop connecting unless the renewed certificate keeps the same key \(rescue)"
        )
    }

    private var leafPins: PinWarning? {
        switch kind {
        case .ats:
            if domain.requiresLeafMatch && !domain.requiresCAMatch {
                return PinWarning(
                    .leafOnly,
                    "only leaf pins (NSPinnedLeafIdentities): every new server key needs an app update first; ship backup leaf pins, or pin the CA instead (NSPinnedCAIdentities alone: with both lists ATS still needs the leaf to match)"
                )
            }
            if domain.requiresLeafMatch && domain.requiresCAMatch {
                return PinWarning(
                    .leafRequired,
                    "both NSPinnedLeafIdentities and NSPinnedCAIdentities are set: ATS requires a match in each, so a new leaf key breaks this domain even though a CA pin still matches"
                )
            }
            return nil
        case .androidNetworkSecurityConfig:
            let matched = matchedElements
            guard !matched.isEmpty, matched.allSatisfy({ $0.position == .leaf }) else { return nil }
            return PinWarning(
                .leafOnly,
                "only the leaf's key is pinned in this chain (no pin matches an intermediate or root): every new server key needs an app update first, unless a backup pin is its key"
            )
        }
    }

    private var pinSetExpiry: PinWarning? {
        guard let expiration = domain.expiration else { return nil }
        let day = DateText.day(expiration)
        if expiration <= now {
            return PinWarning(
                .pinSetExpired,
                "the pin-set expired on \(day): Android no longer enforces these pins, so this domain is not pinned at all"
            )
        }
        let days = Int((expiration.timeIntervalSince(now) / 86_400).rounded(.down))
        guard days <= PinChecker.soonDays else { return nil }
        return PinWarning(
            .pinSetExpiring,
            "the pin-set expires on \(day) (\(DateText.daysLeft(days))): after that Android stops enforcing these pins")
    }

    private var overridePins: PinWarning? {
        guard !domain.overridingSources.isEmpty else { return nil }
        let sources = domain.overridingSources.map { "src=\"\($0)\"" }.joined(separator: ", ")
        let user =
            domain.overridingSources.contains("user")
            ? ": a user-installed CA, such as mitm-proxy's, defeats these pins" : ""
        return PinWarning(
            .overridePins,
            "trust anchors \(sources) have overridePins=\"true\": chains that end at those CAs skip pinning\(user)")
    }

    private var rootNotInChain: PinWarning? {
        guard chain.served, let last = chain.elements.last, last.position != .root else { return nil }
        let unmatched = results.filter { $0.matches.isEmpty && $0.pin.scope != .leaf && $0.problem == nil }
        guard !unmatched.isEmpty else { return nil }
        return PinWarning(
            .rootNotInChain,
            "the server did not send its root certificate, so a pin on the root cannot be seen here; add the root's file with --cert root.pem"
        )
    }
}
