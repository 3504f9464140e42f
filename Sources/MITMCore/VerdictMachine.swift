/// What the proxy observes on the client side of one intercepted TLS connection.
package enum ClientTLSObservation: Sendable, Equatable {
    /// The proxy wrote its certificate toward the client.
    case certificateSent
    /// The client sent a TLS alert (fatal or close_notify).
    case alertReceived(TLSAlert)
    /// The handshake resumed an earlier session: no certificate was shown on this connection.
    case sessionResumed
    /// The TLS handshake completed.
    case handshakeCompleted
    /// The client sent application data.
    case applicationData
    /// The client closed (FIN) or reset the TCP connection.
    case peerClosed(reset: Bool)
    /// OpenSSL failed the handshake without a client alert (garbage, protocol mismatch); the reason.
    case handshakeFailed(String)
    /// The silence window after the handshake ended with no data.
    case silenceWindowElapsed
    /// The proxy is stopping (or the handshake timed out) and the connection is still undecided.
    case stopped
}

/// The verdict state machine of one intercepted connection (DESIGN.md "Verdicts"): observations in,
/// a verdict out exactly when it is decided. An `inconclusive` verdict may later be superseded by
/// `intercepted` if the client speaks after the window; every other verdict is final.
package struct VerdictMachine: Sendable {
    private enum State: Sendable {
        case handshaking(certificateSent: Bool)
        case established
        case decided(Verdict)
    }

    private var state = State.handshaking(certificateSent: false)
    private var lastAlert: TLSAlert?
    private var resumed = false
    private let alsoRejectingCertificate: Set<TLSAlert>

    /// A machine for a new connection; `alsoRejectingCertificate` are alerts that, for the certificate shown, mean
    /// a refusal of it besides the certificate alerts (see `CertificateProfile.alsoRejectingCertificate`).
    package init(alsoRejectingCertificate: Set<TLSAlert> = []) {
        self.alsoRejectingCertificate = alsoRejectingCertificate
    }

    private func rejectsCertificate(_ alert: TLSAlert) -> Bool {
        alert.rejectsCertificate || alsoRejectingCertificate.contains(alert)
    }

    /// The verdict so far, if decided.
    package var verdict: Verdict? {
        if case .decided(let verdict) = state { return verdict }
        return nil
    }

    /// Whether the handshake completed.
    package var handshakeCompleted: Bool {
        switch state {
        case .handshaking: return false
        case .established: return true
        case .decided(let verdict):
            return verdict.reason != .alert && verdict.reason != .closedInHandshake && verdict.reason != .negotiation
        }
    }

    /// Feeds one observation; returns the verdict when this observation decides (or upgrades) it.
    package mutating func receive(_ observation: ClientTLSObservation) -> Verdict? {
        switch state {
        case .handshaking(let certificateSent):
            return duringHandshake(observation, certificateSent: certificateSent)
        case .established:
            return afterHandshake(observation)
        case .decided(let verdict):
            if verdict.kind == .inconclusive && observation == .applicationData {
                return decide(
                    Verdict(
                        kind: .intercepted, reason: .applicationData,
                        detail: "the client spoke after the silence window"))
            }
            return nil
        }
    }

    private mutating func duringHandshake(_ observation: ClientTLSObservation, certificateSent: Bool) -> Verdict? {
        switch observation {
        case .certificateSent:
            state = .handshaking(certificateSent: true)
            return nil
        case .alertReceived(let alert):
            lastAlert = alert
            if rejectsCertificate(alert) {
                return decide(Verdict(kind: .refused, reason: .alert, alert: alert.name))
            }
            if alert == .closeNotify {
                return certificateSent
                    ? decide(Verdict(kind: .refused, reason: .closedInHandshake, alert: alert.name))
                    : decide(
                        Verdict(
                            kind: .failed, reason: .negotiation, alert: alert.name,
                            detail: "closed before the certificate was sent"))
            }
            return decide(Verdict(kind: .failed, reason: .negotiation, alert: alert.name))
        case .sessionResumed:
            resumed = true
            return nil
        case .handshakeCompleted:
            state = .established
            return nil
        case .applicationData:
            state = .established
            return decide(Verdict(kind: .intercepted, reason: .applicationData))
        case .peerClosed(let reset):
            let how = reset ? "reset" : "closed"
            return certificateSent
                ? decide(
                    Verdict(kind: .refused, reason: .closedInHandshake, detail: "connection \(how) without an alert"))
                : decide(
                    Verdict(
                        kind: .failed, reason: .negotiation, detail: "connection \(how) before the certificate was sent"
                    ))
        case .handshakeFailed(let reason):
            return decide(Verdict(kind: .failed, reason: .negotiation, detail: reason))
        case .silenceWindowElapsed:
            return nil
        case .stopped:
            return decide(Verdict(kind: .inconclusive, reason: .idle, detail: "the handshake had not finished"))
        }
    }

    private mutating func afterHandshake(_ observation: ClientTLSObservation) -> Verdict? {
        switch observation {
        case .applicationData:
            return decide(Verdict(kind: .intercepted, reason: .applicationData))
        case .alertReceived(let alert):
            lastAlert = alert
            if rejectsCertificate(alert) {
                return decide(Verdict(kind: .refused, reason: .alert, alert: alert.name))
            }
            return decide(Verdict(kind: .refused, reason: .closedAfterHandshake, alert: alert.name))
        case .peerClosed(let reset):
            return decide(
                Verdict(
                    kind: .refused, reason: .closedAfterHandshake, alert: lastAlert?.name,
                    detail: reset ? "connection reset" : nil))
        case .silenceWindowElapsed, .stopped:
            return decide(Verdict(kind: .inconclusive, reason: .idle))
        case .handshakeFailed(let reason):
            return decide(Verdict(kind: .failed, reason: .negotiation, detail: reason))
        case .sessionResumed:
            resumed = true
            return nil
        case .certificateSent, .handshakeCompleted:
            return nil
        }
    }

    /// Decides `verdict`, saying so when the session was resumed (the certificate was judged in an earlier handshake).
    private mutating func decide(_ verdict: Verdict) -> Verdict {
        var verdict = verdict
        if resumed {
            verdict.resumed = true
            verdict.detail = [verdict.detail, Verdict.resumedSessionDetail].compactMap { $0 }.joined(separator: "; ")
        }
        state = .decided(verdict)
        return verdict
    }
}
