/// What the audit concludes for one host from its row of cells.
package struct AuditConclusion: Sendable, Equatable, Codable {
    /// The kinds of conclusion, worst first.
    package enum Kind: String, Sendable, Codable {
        /// The client accepted an invalid certificate: it does not validate certificates.
        case critical
        /// Refused every invalid certificate and accepted the trusted one: validates, no pinning.
        case validatesNotPinned = "validates-not-pinned"
        /// Refused every invalid certificate and the trusted one too, while the origin's own certificate worked: pinned.
        case pinned
        /// Refused every invalid certificate; no `trusted` round said whether it pins.
        case validates
        /// Some cells prove nothing (unseen, inconclusive), so no conclusion can be drawn.
        case provesNothing = "proves-nothing"
    }

    /// The conclusion.
    package var kind: Kind
    /// Why, in words.
    package var explanation: String

    /// The conclusion for one host's `cells` (one per round); `passthroughCommandFailed` when the client command
    /// of the passthrough round failed; `unprovenRefuser`: a client that refused the trusted certificate without
    /// accepting the proxy's CA anywhere in that round (its refusal may only mean that the CA is not installed).
    package static func of(_ cells: [AuditCell], passthroughCommandFailed: Bool, unprovenRefuser: String? = nil)
        -> AuditConclusion
    {
        let accepted = cells.filter(\.isCritical).map(\.profile.description)
        if !accepted.isEmpty {
            return AuditConclusion(
                kind: .critical,
                explanation: "CRITICAL: the client accepted invalid certificates ("
                    + accepted.joined(separator: ", ")
                    + "): it does not validate certificates; anyone on its network can read and change this traffic")
        }
        let unproven = cells.filter { cell in
            (cell.profile.isInvalid || cell.profile == .trusted) && cell.verdict != .refused
                && cell.verdict != .accepted
        }
        if !unproven.isEmpty {
            let reasons = unproven.map { cell in
                let why =
                    cell.verdict == .unseen
                    ? "the client never contacted the host in that round"
                    : "no refusal or request (\(cell.how.joined(separator: ", ")))"
                return "\(cell.profile): \(cell.verdict.rawValue) (\(why))"
            }
            return AuditConclusion(
                kind: .provesNothing, explanation: "proves nothing: " + reasons.joined(separator: "; "))
        }
        let invalidCount = cells.filter(\.profile.isInvalid).count
        let refusedEvery =
            invalidCount > 0 ? "refused all \(invalidCount) invalid certificates" : "no invalid certificate was shown"
        guard let trusted = cells.first(where: { $0.profile == .trusted }) else {
            return AuditConclusion(
                kind: invalidCount > 0 ? .validates : .provesNothing,
                explanation: "\(refusedEvery); without a trusted round, pinning was not tested")
        }
        if trusted.verdict == .accepted {
            guard invalidCount > 0 else {
                return AuditConclusion(
                    kind: .provesNothing,
                    explanation: "accepted the trusted certificate; no invalid certificate was shown")
            }
            return AuditConclusion(
                kind: .validatesNotPinned,
                explanation:
                    "\(refusedEvery) and accepted the proxy CA's certificate: validates certificates, not pinned")
        }
        guard let passthrough = cells.first(where: { $0.profile == .passthrough }) else {
            return AuditConclusion(
                kind: .provesNothing,
                explanation: "\(refusedEvery) and refused the trusted one too, but without a "
                    + "passthrough round nothing shows that the client can reach the host at all")
        }
        guard passthrough.verdict == .passedThrough, !passthroughCommandFailed else {
            let why =
                passthrough.verdict == .passedThrough
                ? "the client command failed in the passthrough round"
                : "the client did not reach the host in the passthrough round"
            return AuditConclusion(
                kind: .provesNothing,
                explanation: "\(refusedEvery) and refused the trusted one too, but \(why): "
                    + "the route may be broken rather than pinned")
        }
        guard invalidCount > 0 else {
            return AuditConclusion(
                kind: .provesNothing, explanation: "refused the trusted certificate; no invalid certificate was shown")
        }
        if let unprovenRefuser {
            return AuditConclusion(
                kind: .provesNothing,
                explanation: "nothing proven: this client (\(unprovenRefuser)) refused the trusted "
                    + "certificate but never accepted the proxy's CA in that round: is the CA installed and trusted? Let the command also "
                    + "load a control host or https://mitm.proxy/ through the proxy")
        }
        return AuditConclusion(
            kind: .pinned,
            explanation: "\(refusedEvery), refused the proxy CA's certificate (\(trusted.how.joined(separator: ", "))) "
                + "and worked with the origin's own: pinned")
    }
}
