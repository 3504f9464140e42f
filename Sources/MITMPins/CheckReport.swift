import Foundation

/// The outcome of `mitm-proxy pins check`: one configuration against one chain.
public struct PinCheckReport: Sendable {
    /// The app's configuration.
    public let configuration: AppPinConfiguration
    /// The chain compared with.
    public let chain: CertificateChain
    /// How the domains were chosen, when not all of them were checked.
    public let selectionNote: String?
    /// One result per checked domain.
    public let domains: [DomainCheck]

    /// A report.
    public init(
        configuration: AppPinConfiguration, chain: CertificateChain, selectionNote: String?, domains: [DomainCheck]
    ) {
        self.configuration = configuration
        self.chain = chain
        self.selectionNote = selectionNote
        self.domains = domains
    }

    /// Whether every checked domain matches.
    public var allMatched: Bool { !domains.isEmpty && domains.allSatisfy(\.matched) }

    /// 0 when every domain matches, 1 otherwise.
    public var exitStatus: Int32 { allMatched ? 0 : 1 }

    /// The report for a person.
    public var text: String {
        var lines = [
            "Pins in \(configuration.path) (\(configuration.kind.displayName))",
            "checked against \(chain.source):",
        ]
        for element in chain.elements {
            lines.append(
                "  [\(element.index)] \(element.position.rawValue)  \(element.subject)  (\(element.key), not after \(DateText.day(element.notAfter)), \(DateText.daysLeft(element.daysLeft)))"
            )
            lines.append("      SPKI-SHA256-BASE64 \(element.pin)")
        }
        if let selectionNote { lines += ["", selectionNote] }
        for check in domains {
            lines.append("")
            let subdomains = check.domain.includesSubdomains ? " (and subdomains)" : ""
            lines.append("\(check.domain.name)\(subdomains): \(check.matched ? "MATCH" : "NO MATCH")")
            if let note = LeafNameCoverage.note(for: check.domain.name, chain: chain) { lines.append("  " + note) }
            for result in check.pins { lines.append("  " + describe(result)) }
            if check.pins.isEmpty { lines.append("  (no pins)") }
            for warning in check.warnings { lines.append("  warning [\(warning.code.rawValue)]: \(warning.message)") }
        }
        let matched = domains.filter(\.matched).count
        lines.append("")
        if domains.count == 1 {
            lines.append(
                matched == 1 ? "The pinned domain matches this chain." : "The pinned domain does not match this chain.")
        } else {
            lines.append("\(matched) of \(domains.count) pinned domains match this chain.")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as JSON.
    public var json: String {
        JSONText.encode(CheckJSON(self))
    }

    private func describe(_ result: PinMatchResult) -> String {
        let kind: String
        switch result.pin.scope {
        case .leaf: kind = "leaf pin"
        case .ca: kind = "CA pin  "
        case .any: kind = "pin"
        }
        let outcome: String
        if !result.matches.isEmpty {
            outcome = "matches " + result.matches.map(\.label).joined(separator: ", ")
        } else if let problem = result.problem {
            outcome = "NO MATCH: \(problem)"
        } else {
            outcome = "no match in this chain"
        }
        return "\(kind) \(result.pin.value)  \(outcome)"
    }
}

private struct CheckJSON: Encodable {
    struct Configuration: Encodable {
        let path: String
        let kind: PinConfigurationKind
    }

    struct Chain: Encodable {
        let source: String
        let certificates: [ElementJSON]
    }

    struct Pin: Encodable {
        let value: String
        let scope: PinScope
        let matches: [Int]
        let outOfScope: [Int]
        let problem: String?
    }

    struct Domain: Encodable {
        let domain: String
        let includesSubdomains: Bool
        let expiration: String?
        let matched: Bool
        let pins: [Pin]
        let warnings: [PinWarning]
        /// Set when the leaf's names do not cover the domain.
        let note: String?
    }

    let configuration: Configuration
    let chain: Chain
    let selectionNote: String?
    let domains: [Domain]
    let allMatched: Bool
    let exitStatus: Int32

    init(_ report: PinCheckReport) {
        configuration = Configuration(path: report.configuration.path, kind: report.configuration.kind)
        chain = Chain(
            source: report.chain.source, certificates: report.chain.elements.map { ElementJSON($0, rawKey: false) })
        selectionNote = report.selectionNote
        domains = report.domains.map { check in
            Domain(
                domain: check.domain.name,
                includesSubdomains: check.domain.includesSubdomains,
                expiration: check.domain.expiration.map(DateText.day),
                matched: check.matched,
                pins: check.pins.map {
                    Pin(
                        value: $0.pin.value, scope: $0.pin.scope, matches: $0.matches.map(\.index),
                        outOfScope: $0.outOfScope.map(\.index), problem: $0.problem)
                },
                warnings: check.warnings,
                note: LeafNameCoverage.note(for: check.domain.name, chain: report.chain)
            )
        }
        allMatched = report.allMatched
        exitStatus = report.exitStatus
    }
}
