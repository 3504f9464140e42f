import Testing

@testable import MITMProxy

/// The raw relay's machine (`RawRelayLife`): how each side's end, drain and failure moves a tunnel toward its close.
@Suite struct RawRelayLifeTests {
    private func life(after events: [RawRelayLife.Event]) -> RawRelayLife {
        var life = RawRelayLife()
        for event in events { _ = life.receive(event) }
        return life
    }

    @Test func aDrainLetsTheSideFeedingItReadAgain() {
        var life = RawRelayLife()
        #expect(life.receive(.drained(.client)) == [.resumeReading(.upstream)])
        #expect(life.receive(.drained(.upstream)) == [.resumeReading(.client)])
        #expect(life.state == .flowing)
    }

    @Test(arguments: [RawRelayLife.Side.client, .upstream])
    func oneSidesEndIsPassedOnAndTheOtherKeepsSending(side: RawRelayLife.Side) {
        var life = RawRelayLife()
        #expect(life.receive(.inputEnded(side)) == [.passEnd(from: side)])
        #expect(life.state == .oneSideEnded(side))
        // The ended side sends nothing more, so a drain toward the other side wakes no one.
        #expect(life.receive(.drained(side.other)) == [])
        #expect(life.receive(.drained(side)) == [.resumeReading(side.other)])
    }

    @Test func aSecondEndFromTheSameSideIsNotPassedOnAgain() {
        var life = life(after: [.inputEnded(.upstream)])
        #expect(life.receive(.inputEnded(.upstream)) == [])
        #expect(life.state == .oneSideEnded(.upstream))
    }

    @Test func bothEndsCloseOnceTheQueuedBytesHaveLeft() {
        var life = life(after: [.inputEnded(.client)])
        #expect(life.receive(.inputEnded(.upstream)) == [.passEnd(from: .upstream), .closeIfFlushed])
        #expect(life.state == .flushing)
        #expect(life.receive(.drained(.client)) == [.closeIfFlushed])
        #expect(life.receive(.inputEnded(.client)) == [])
        #expect(life.receive(.close(reason: "both sides closed")) == [.close(reason: "both sides closed")])
        #expect(life.state == .closed)
    }

    @Test func aFailureClosesAtOnceNamingTheSide() {
        var fromClient = RawRelayLife()
        #expect(fromClient.receive(.failed(.client, reason: "reset")) == [.close(reason: "client: reset")])
        var fromUpstream = life(after: [.inputEnded(.client)])
        #expect(fromUpstream.receive(.failed(.upstream, reason: "reset")) == [.close(reason: "upstream: reset")])
        #expect(fromUpstream.state == .closed)
    }

    @Test func nothingHappensAfterTheClose() {
        var life = life(after: [.close(reason: "idle for 60 s")])
        #expect(life.state == .closed)
        for event: RawRelayLife.Event in [
            .inputEnded(.client), .drained(.upstream), .failed(.client, reason: "reset"), .close(reason: "again"),
        ] {
            #expect(life.receive(event) == [])
        }
    }
}
