import Testing

@testable import MITMCore

@Suite struct VerdictMachineTests {
    private func run(_ observations: [ClientTLSObservation]) -> [Verdict] {
        var machine = VerdictMachine()
        return observations.compactMap { machine.receive($0) }
    }

    @Test func applicationDataAfterTheHandshakeIsIntercepted() {
        #expect(
            run([.certificateSent, .handshakeCompleted, .applicationData]) == [
                Verdict(kind: .intercepted, reason: .applicationData)
            ])
    }

    /// A resumed connection was shown no certificate: its verdict says it was resumed, whatever it is.
    @Test func aResumedSessionIsNamedInTheVerdict() {
        var intercepted = Verdict(kind: .intercepted, reason: .applicationData, detail: Verdict.resumedSessionDetail)
        intercepted.resumed = true
        #expect(run([.sessionResumed, .handshakeCompleted, .applicationData]) == [intercepted])
        let closed = run([.sessionResumed, .handshakeCompleted, .peerClosed(reset: true)])
        #expect(closed.map(\.reason) == [.closedAfterHandshake] && closed.first?.resumed == true)
        #expect(closed.first?.detail == "connection reset; \(Verdict.resumedSessionDetail)")
        #expect(run([.certificateSent, .handshakeCompleted, .applicationData]).first?.resumed == nil)
    }

    @Test(arguments: [TLSAlert.unknownCA, .badCertificate, .certificateUnknown, TLSAlert(code: 45), TLSAlert(code: 49)])
    func aCertificateAlertIsARefusal(alert: TLSAlert) {
        #expect(
            run([.certificateSent, .alertReceived(alert)]) == [
                Verdict(kind: .refused, reason: .alert, alert: alert.name)
            ])
    }

    @Test(arguments: [
        TLSAlert.handshakeFailure, TLSAlert(code: 70), TLSAlert(code: 71), TLSAlert(code: 120), TLSAlert(code: 47),
        TLSAlert(code: 80),
    ])
    func aNegotiationAlertIsNeverARefusal(alert: TLSAlert) {
        let verdicts = run([.certificateSent, .alertReceived(alert)])
        #expect(verdicts.map(\.kind) == [.failed])
        #expect(verdicts.first?.reason == .negotiation)
        #expect(verdicts.first?.alert == alert.name)
    }

    @Test func hangingUpAfterTheCertificateWithoutAnAlertIsClosedInHandshake() {
        #expect(run([.certificateSent, .peerClosed(reset: false)]).map(\.reason) == [.closedInHandshake])
        #expect(run([.certificateSent, .peerClosed(reset: true)]).map(\.kind) == [.refused])
    }

    @Test func hangingUpBeforeTheCertificateIsAFailureNotARefusal() {
        #expect(run([.peerClosed(reset: false)]).map(\.kind) == [.failed])
    }

    @Test func closingAfterTheHandshakeWithoutDataIsClosedAfterHandshake() {
        let verdicts = run([.certificateSent, .handshakeCompleted, .alertReceived(.closeNotify)])
        #expect(verdicts == [Verdict(kind: .refused, reason: .closedAfterHandshake, alert: "close_notify")])
        #expect(
            run([.certificateSent, .handshakeCompleted, .peerClosed(reset: false)]).map(\.reason) == [
                .closedAfterHandshake
            ])
    }

    @Test func silenceUntilTheWindowEndsIsInconclusiveAndLaterDataUpgradesIt() {
        var machine = VerdictMachine()
        _ = machine.receive(.certificateSent)
        _ = machine.receive(.handshakeCompleted)
        #expect(machine.receive(.silenceWindowElapsed)?.kind == .inconclusive)
        #expect(machine.receive(.peerClosed(reset: false)) == nil)
        var late = VerdictMachine()
        _ = late.receive(.handshakeCompleted)
        _ = late.receive(.silenceWindowElapsed)
        #expect(late.receive(.applicationData)?.kind == .intercepted)
    }

    @Test func aDecidedRefusalIsFinal() {
        var machine = VerdictMachine()
        _ = machine.receive(.certificateSent)
        _ = machine.receive(.alertReceived(.unknownCA))
        #expect(machine.receive(.applicationData) == nil)
        #expect(machine.verdict?.kind == .refused)
    }

    @Test func garbageOrAProtocolErrorIsANegotiationFailure() {
        #expect(
            run([.handshakeFailed("wrong version number")]) == [
                Verdict(kind: .failed, reason: .negotiation, detail: "wrong version number")
            ])
    }

    @Test func stoppingMidHandshakeIsInconclusive() {
        #expect(run([.certificateSent, .stopped]).map(\.kind) == [.inconclusive])
    }
}

@Suite struct VerdictMachineProfileTests {
    @Test func decryptErrorRefusesASameNameCACertificateOnly() {
        var plain = VerdictMachine()
        _ = plain.receive(.certificateSent)
        #expect(plain.receive(.alertReceived(.decryptError))?.kind == .failed)
        var sameName = VerdictMachine(alsoRejectingCertificate: CertificateProfile.sameNameCA.alsoRejectingCertificate)
        _ = sameName.receive(.certificateSent)
        #expect(
            sameName.receive(.alertReceived(.decryptError))
                == Verdict(kind: .refused, reason: .alert, alert: "decrypt_error"))
    }
}
