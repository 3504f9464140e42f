/// How one connection's verdict was reached, as counted per host: the reason, and the TLS alert when it decided the
/// verdict (`alert unknown_ca`) or came with a failure (`negotiation (alert handshake_failure)`).
public struct VerdictWay: Sendable, Hashable, CustomStringConvertible {
    /// Why the verdict is what it is.
    public var reason: VerdictReason
    /// The alert that decided or came with the verdict; nil when none did.
    public var alert: String?

    /// A way with `reason` and `alert`.
    public init(reason: VerdictReason, alert: String? = nil) {
        self.reason = reason
        self.alert = alert
    }

    /// The way `verdict` was reached (its alert only when the alert decided it, or the handshake failed).
    public init(_ verdict: Verdict) {
        reason = verdict.reason
        alert = verdict.reason == .alert || verdict.kind == .failed ? verdict.alert : nil
    }

    /// The way in words, as reports write it: `closed-after-handshake`, `alert unknown_ca`,
    /// `negotiation (alert handshake_failure)`.
    public var description: String {
        guard let alert else { return reason.rawValue }
        return reason == .alert ? "alert \(alert)" : "\(reason.rawValue) (alert \(alert))"
    }

    /// Reads `description` back; nil for words that are no way.
    public init?(text: String) {
        if text.hasPrefix("alert "), text.count > 6 {
            self.init(reason: .alert, alert: String(text.dropFirst(6)))
        } else if let open = text.firstIndex(of: "("), text.hasSuffix(")"),
            let reason = VerdictReason(rawValue: String(text[..<open]).trimmingSuffix(" ")),
            text[open...].hasPrefix("(alert ")
        {
            self.init(reason: reason, alert: String(text[open...].dropFirst(7).dropLast()))
        } else if let reason = VerdictReason(rawValue: text) {
            self.init(reason: reason)
        } else {
            return nil
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
