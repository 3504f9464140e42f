import MITMCore
import MITMTLS
import Testing

@testable import MITMProxy

/// A TLS leg's life, driven event by event with no socket: each hook of its owner is told at most once.
@Suite struct TLSLegLifeTests {
    private let failure = TLSFailure(reason: "bad record mac", receivedAlert: .badCertificate, verifyError: nil)

    private func openLife() -> TLSLegLife {
        var life = TLSLegLife()
        _ = life.receive(.handshakeStepped(.complete))
        return life
    }

    @Test func theHandshakeEndsOnceAndThePlaintextFollows() {
        var life = TLSLegLife()
        #expect(life.isHandshaking && !life.readsPlaintext)
        #expect(life.receive(.handshakeStepped(.needsInput)) == .none)
        #expect(life.receive(.handshakeStepped(.complete)) == .reportHandshake(.complete))
        #expect(!life.isHandshaking && life.readsPlaintext)
        #expect(life.receive(.plaintext) == .reportFirstData)
        #expect(life.receive(.plaintext) == .deliver)
        #expect(life.receive(.inputEnded(.closeNotify)) == .passInputEnd)
        #expect(!life.readsPlaintext)
        #expect(life.receive(.inputEnded(.finished)) == .none)
    }

    @Test func aFailedHandshakeIsReportedAndNothingAfterIt() {
        var life = TLSLegLife()
        #expect(life.receive(.handshakeStepped(.failed(failure))) == .reportHandshake(.failed(failure)))
        #expect(life.state == .handshakeFailed)
        #expect(life.receive(.inputEnded(.finished)) == .none)
        #expect(life.receive(.inputEnded(.reset)) == .none)
    }

    @Test(arguments: [(TLSLegLife.InputEnding.finished, false), (.reset, true)])
    func aPeerLeavingDuringTheHandshakeEndsIt(ending: TLSLegLife.InputEnding, reset: Bool) {
        var life = TLSLegLife()
        #expect(life.receive(.inputEnded(ending)) == .reportHandshake(.peerClosed(reset: reset)))
        #expect(!life.isHandshaking && !life.readsPlaintext)
    }

    @Test func anInputEndBeforeAnyPlaintextIsToldToTheOwner() {
        var closed = openLife()
        #expect(closed.receive(.inputEnded(.closeNotify)) == .reportInputEnd(alert: .closeNotify, reset: false))
        var finished = openLife()
        #expect(finished.receive(.inputEnded(.finished)) == .reportInputEnd(alert: nil, reset: false))
        var reset = openLife()
        #expect(reset.receive(.inputEnded(.reset)) == .reportInputEnd(alert: nil, reset: true))
        var rejected = openLife()
        #expect(
            rejected.receive(.inputEnded(.failed(alert: .badCertificate)))
                == .reportInputEnd(alert: .badCertificate, reset: false))
        #expect(rejected.state == .inputEnded)
    }

    @Test func aResetAfterTheFinStillReachesTheListener() {
        var life = openLife()
        #expect(life.receive(.plaintext) == .reportFirstData)
        #expect(life.receive(.inputEnded(.finished)) == .passInputEnd)
        #expect(life.receive(.inputEnded(.reset)) == .passInputEnd)
    }

    @Test func impossibleEventsAreNamed() {
        var life = TLSLegLife()
        #expect(life.receive(.plaintext) == .impossible(.plaintextOutsideTheOpenLeg))
        #expect(life.receive(.inputEnded(.closeNotify)) == .impossible(.alertDuringTheHandshake))
        var open = openLife()
        #expect(open.receive(.handshakeStepped(.complete)) == .impossible(.handshakeStepAfterTheHandshake))
        #expect(open.receive(.inputEnded(.finished)) == .reportInputEnd(alert: nil, reset: false))
        #expect(open.receive(.plaintext) == .impossible(.plaintextOutsideTheOpenLeg))
    }
}
