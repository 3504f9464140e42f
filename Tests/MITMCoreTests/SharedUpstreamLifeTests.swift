import Testing

@testable import MITMCore

@Suite struct SharedUpstreamLifeTests {
    @Test func anUnusedConnectionIdlesAndGoesAfterTheIdleTime() {
        var life = SharedUpstreamLife()
        #expect(life.receive(.attached) == [.cancelIdleTimer])
        #expect(life.receive(.attached) == [])
        #expect(life.receive(.detached) == [])
        #expect(life.receive(.detached) == [.scheduleIdleTimer])
        #expect(life.canTakeMore(peerMaxConcurrentStreams: 100))
        #expect(life.receive(.attached) == [.cancelIdleTimer], "a later client takes the idle connection")
        #expect(life.receive(.idleTimeout) == [], "a timer that fired late does not close a used connection")
        #expect(life.receive(.detached) == [.scheduleIdleTimer])
        #expect(life.receive(.idleTimeout) == [.leavePool, .sendGoAway, .close])
        #expect(life.state == .closed)
        #expect(life.receive(.attached) == [])
    }

    @Test func theUpstreamsConcurrencyLimitDecidesWhetherItTakesMore() {
        var life = SharedUpstreamLife()
        _ = life.receive(.attached)
        _ = life.receive(.streamOpened)
        #expect(life.canTakeMore(peerMaxConcurrentStreams: 2))
        _ = life.receive(.streamOpened)
        #expect(!life.canTakeMore(peerMaxConcurrentStreams: 2))
        _ = life.receive(.streamClosed)
        #expect(life.canTakeMore(peerMaxConcurrentStreams: 2))
    }

    @Test func afterGoAwayItTakesNothingNewAndClosesWhenItsStreamsEnd() {
        var life = SharedUpstreamLife()
        _ = life.receive(.attached)
        _ = life.receive(.streamOpened)
        #expect(life.receive(.goAwayReceived) == [.leavePool])
        #expect(!life.canTakeMore(peerMaxConcurrentStreams: 100))
        #expect(life.receive(.streamClosed) == [.sendGoAway, .close])
    }

    @Test func afterGoAwayTheLastUserLeavingClosesIt() {
        var life = SharedUpstreamLife()
        _ = life.receive(.attached)
        _ = life.receive(.streamOpened)
        _ = life.receive(.goAwayReceived)
        #expect(life.receive(.detached) == [.sendGoAway, .close])
        var idle = SharedUpstreamLife()
        _ = idle.receive(.attached)
        _ = idle.receive(.detached)
        #expect(idle.receive(.goAwayReceived) == [.leavePool, .sendGoAway, .close])
    }

    @Test func aBrokenConnectionLeavesThePoolAndCloses() {
        var life = SharedUpstreamLife()
        _ = life.receive(.attached)
        #expect(life.receive(.broke) == [.leavePool, .close])
        #expect(life.receive(.detached) == [])
        var stopping = SharedUpstreamLife()
        #expect(stopping.receive(.stopping) == [.leavePool, .sendGoAway, .close])
    }
}
