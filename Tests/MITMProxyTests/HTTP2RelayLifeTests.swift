import Testing

@testable import MITMProxy

/// The HTTP/2 relay's connection machine (`HTTP2RelayLife`): the upstream going away, the GOAWAY owed to the client,
/// a graceful finish and a close.
@Suite struct HTTP2RelayLifeTests {
    @Test func aRelayWithoutAnUpstreamServesWithoutOne() {
        #expect(HTTP2RelayLife(upstreamAvailable: true).upstreamAvailable)
        let failing = HTTP2RelayLife(upstreamAvailable: false)
        #expect(failing.state == .serving(.unavailable) && !failing.upstreamAvailable && failing.isServing)
    }

    @Test func theClientIsToldOnceItsQueuedFramesAreOutWhenTheUpstreamGoesAway() {
        var life = HTTP2RelayLife(upstreamAvailable: true)
        #expect(life.receive(.upstreamWentAway) == [])
        #expect(life.state == .serving(.goneGoAwayOwed) && !life.upstreamAvailable)
        #expect(life.receive(.clientOutputFlushed) == [.goAwayToClient])
        #expect(life.state == .serving(.unavailable))
        #expect(life.receive(.clientOutputFlushed) == [])
    }

    @Test func aFinishSaysGoodbyeAndWaitsForTheClientToHangUp() {
        var life = HTTP2RelayLife(upstreamAvailable: true)
        #expect(
            life.receive(.finish(reason: "closed by rule", clientGone: false)) == [
                .sayGoodbye(reason: "closed by rule", goAway: true), .awaitHangUp,
            ])
        #expect(life.state == .finishing(reason: "closed by rule") && !life.isServing)
        // Goodbyes are said once: a later finish, or the upstream going away, changes nothing.
        #expect(life.receive(.finish(reason: "again", clientGone: false)) == [])
        #expect(life.receive(.upstreamWentAway) == [])
        #expect(life.receive(.clientHungUp) == [.close(reason: "closed by rule", goodbyeFirst: false)])
        #expect(life.isClosed)
    }

    @Test func aClientThatLeftGetsNoGoAwayAndTheRelayClosesAtOnce() {
        var life = HTTP2RelayLife(upstreamAvailable: true)
        #expect(
            life.receive(.finish(reason: "the client closed the connection", clientGone: true)) == [
                .sayGoodbye(reason: "the client closed the connection", goAway: false),
                .close(reason: "the client closed the connection", goodbyeFirst: false),
            ])
        #expect(life.isClosed)
    }

    @Test func aCloseSaysGoodbyeFirstOnlyIfNothingWasSaid() {
        var serving = HTTP2RelayLife(upstreamAvailable: true)
        #expect(
            serving.receive(.close(reason: "idle for 60 s")) == [.close(reason: "idle for 60 s", goodbyeFirst: true)])
        var finishing = HTTP2RelayLife(upstreamAvailable: true)
        _ = finishing.receive(.finish(reason: "the connection ended", clientGone: false))
        #expect(finishing.receive(.close(reason: "done")) == [.close(reason: "done", goodbyeFirst: false)])
    }

    @Test func nothingHappensAfterTheClose() {
        var life = HTTP2RelayLife(upstreamAvailable: true)
        _ = life.receive(.close(reason: "done"))
        for event: HTTP2RelayLife.Event in [
            .upstreamWentAway, .clientOutputFlushed, .finish(reason: "x", clientGone: false), .clientHungUp,
            .close(reason: "again"),
        ] {
            #expect(life.receive(event) == [])
        }
    }
}
