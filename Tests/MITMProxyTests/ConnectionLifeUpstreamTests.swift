import Testing

@testable import MITMCore
@testable import MITMProxy

private typealias Life = ConnectionLife<NamedParts>

private let second: UInt64 = 1_000_000_000
private let timeouts = Life.Timeouts(handshake: .seconds(10), idle: .seconds(60), upstreamPark: .milliseconds(500))
private let target = TunnelTarget(host: "api.test", port: 443)
private let firstBytes = ConnectionDeadline(at: 11 * second, reason: .firstTunnelBytes(host: "api.test", port: 443))
private let reaching = ConnectionDeadline(at: 12 * second, reason: .upstream(host: "api.test", port: 443))

/// A tunnel answered at 1 s with its upstream at `upstream`.
private func peeking(_ upstream: Life.UpstreamProgress) -> Life {
    var life = Life(timeouts: timeouts, now: 0)
    #expect(life.receive(.tunnelAnswered("tunnel", target, upstream: upstream, now: 1 * second)) == [])
    return life
}

/// The same, intercepted at 2 s.
private func intercepting(_ upstream: Life.UpstreamProgress) -> Life {
    var life = peeking(upstream)
    #expect(life.receive(.interceptionStarted("interception", now: 2 * second)) == [])
    return life
}

/// The tunnel's own upstream as the connection's life holds it: pooled, deferred, dialled, connected or failed, and
/// let go of whenever the state that waits for it ends.
@Suite struct ConnectionLifeUpstreamTests {
    @Test func aPooledUpstreamIsTakenByTheInterception() {
        var life = intercepting(.pooled("pooled"))
        #expect(life.upstreamProgress == .pooled("pooled"))
        #expect(life.receive(.upstreamTaken) == [])
        #expect(life.state == .reachingUpstream("interception", .none, until: reaching))
        #expect(life.receive(.clientHandshakeStarted("client leg", "ready", serverName: "api.test", now: 2)) == [])
        #expect(life.upstreamProgress == nil)
    }

    @Test func aPooledUpstreamThatDoesNotFitIsClosedAndOneDialled() {
        var life = intercepting(.pooled("pooled"))
        #expect(life.receive(.upstreamTaken) == [])
        #expect(life.receive(.upstreamDialled("attempt")) == [])
        #expect(life.state == .reachingUpstream("interception", .connecting("attempt"), until: reaching))
    }

    @Test func aRawTunnelClosesItsPooledUpstreamAndDialsItsOwn() {
        var life = peeking(.pooled("pooled"))
        #expect(life.receive(.rawTunnelChosen) == [.closePooledUpstream("pooled"), .dialUpstream(target)])
        #expect(life.receive(.upstreamDialled("attempt")) == [])
        #expect(life.state == .awaitingRawUpstream("tunnel", .connecting("attempt"), until: firstBytes))
    }

    @Test func aDeferredUpstreamIsDialledWhenTheInterceptionNeedsIt() {
        var life = intercepting(.deferred)
        #expect(life.receive(.upstreamNeeded) == [.dialUpstream(target)])
        #expect(life.receive(.upstreamDialled("attempt")) == [])
        #expect(life.upstreamProgress == .connecting("attempt"))
        #expect(life.receive(.upstreamConnected("socket")) == [.secureUpstream("interception", "socket")])
        #expect(life.state == .reachingUpstream("interception", .none, until: reaching), "handed to its TLS leg")
    }

    @Test func aConnectUnderWayKeepsItsOwnTimer() {
        var life = intercepting(.connecting("attempt"))
        #expect(life.receive(.upstreamNeeded) == [])
        #expect(life.receive(.deadlinePassed(now: 12 * second)) == [])
        #expect(life.deadline?.at == 13 * second)
    }

    @Test func aFailedConnectForgesForTheClientAnyway() {
        var life = intercepting(.connecting("attempt"))
        #expect(life.receive(.upstreamFailed("refused")) == [.interceptionUnreachable("interception", "refused")])
        #expect(life.upstreamProgress == .failed("refused"))
        #expect(
            life.receive(.clientHandshakeStarted("client leg", "failed: refused", serverName: "api.test", now: 3)) == []
        )
    }

    @Test func anUpstreamThatSettledDuringThePeekIsUsedAtOnce() {
        var connected = peeking(.connecting("attempt"))
        #expect(connected.receive(.upstreamConnected("socket")) == [.watchServerFirst("tunnel", "socket")])
        #expect(connected.receive(.interceptionStarted("interception", now: 2 * second)) == [])
        #expect(connected.receive(.upstreamNeeded) == [.secureUpstream("interception", "socket")])

        var failed = peeking(.connecting("attempt"))
        #expect(failed.receive(.upstreamFailed("refused")) == [])
        #expect(failed.receive(.rawTunnelChosen) == [.rawTunnelUnreachable("tunnel", "refused")])
    }

    @Test func aRawTunnelWaitsForItsUpstream() {
        var life = peeking(.connecting("attempt"))
        #expect(life.receive(.rawTunnelChosen) == [])
        #expect(life.receive(.deadlinePassed(now: 11 * second)) == [], "the connect answers the client itself")
        #expect(life.receive(.upstreamConnected("socket")) == [.relayRawTunnel("tunnel", "socket")])
        #expect(life.upstreamProgress == Life.UpstreamProgress.none, "handed to the relay")
        #expect(life.receive(.relayStarted("raw", for: .tunnel("tunnel"), headDeadline: nil, now: 12 * second)) == [])

        var unreachable = peeking(.connecting("attempt"))
        #expect(unreachable.receive(.rawTunnelChosen) == [])
        #expect(unreachable.receive(.upstreamFailed("refused")) == [.rawTunnelUnreachable("tunnel", "refused")])
        #expect(unreachable.receive(.close(reason: "upstream unreachable")) == [.closeClient, .leaveRegistry])
    }

    @Test func aServerThatSpeaksFirstHandsItsUpstreamToTheRelay() {
        var life = peeking(.connecting("attempt"))
        _ = life.receive(.upstreamConnected("socket"))
        #expect(life.receive(.upstreamTaken) == [])
        #expect(life.receive(.relayStarted("raw", for: .tunnel("tunnel"), headDeadline: nil, now: 3 * second)) == [])
    }

    @Test func aTunnelThatClosesMidConnectReleasesTheAttempt() {
        var peekingLife = peeking(.connecting("attempt"))
        #expect(
            peekingLife.receive(.close(reason: "client closed the connection")) == [
                .cancelUpstreamAttempt("attempt"), .closeClient, .leaveRegistry,
            ])
        var interceptingLife = intercepting(.connecting("attempt"))
        #expect(
            interceptingLife.receive(.close(reason: "forging failed")) == [
                .cancelUpstreamAttempt("attempt"), .abandonInterception("interception"), .closeClient, .leaveRegistry,
            ])
        var connected = peeking(.connecting("attempt"))
        _ = connected.receive(.upstreamConnected("socket"))
        #expect(
            connected.receive(.linger(seconds: 2, now: 3 * second)) == [.closeUpstreamConnection("socket")],
            "a connected upstream no one took")
    }

    @Test func aSharedUpstreamLetsGoOfTheTunnelsOwn() {
        var life = intercepting(.connecting("attempt"))
        #expect(
            life.receive(.clientHandshakeStarted("client leg", "shared", serverName: "api.test", now: 3)) == [
                .cancelUpstreamAttempt("attempt")
            ])
        var transparent = peeking(.connecting("attempt"))
        _ = transparent.receive(.upstreamConnected("socket"))
        #expect(
            transparent.receive(.relayStarted("http1", for: .plainRequests, headDeadline: nil, now: 3 * second)) == [
                .closeUpstreamConnection("socket")
            ], "plain HTTP in a transparent tunnel: the relay dials its own")
    }

    @Test func anAwaitedTargetIsAnsweredOnceItsUpstreamSettles() {
        var refused = Life(timeouts: timeouts, now: 0)
        _ = refused.receive(.targetAwaited("tunnel", target, dialled: "attempt", now: 0))
        #expect(refused.receive(.upstreamFailed("local")) == [.answerTarget("tunnel", failure: "local")])
        #expect(refused.receive(.linger(seconds: 2, now: 1)) == [], "a failure holds nothing")

        var reached = Life(timeouts: timeouts, now: 0)
        _ = reached.receive(.targetAwaited("tunnel", target, dialled: "attempt", now: 0))
        #expect(reached.receive(.targetAnswered(now: 1)) == [.impossible(.targetAnsweredUnsettled)])
        _ = reached.receive(.upstreamFailed("refused"))
        #expect(reached.receive(.targetAnswered(now: 1 * second)) == [])
        #expect(reached.state == .peeking("tunnel", .failed("refused"), until: firstBytes))
    }

    @Test func upstreamEventsOutOfPlaceAreNamed() {
        var reading = Life(timeouts: timeouts, now: 0)
        #expect(
            reading.receive(.upstreamConnected("late")) == [
                .closeUpstreamConnection("late"), .impossible(.upstreamSettledWithoutAttempt),
            ])
        #expect(reading.receive(.upstreamTaken) == [.impossible(.upstreamTakenWithoutOne)])
        #expect(reading.receive(.upstreamNeeded) == [.impossible(.upstreamNeededWithoutOne)])

        var dialling = peeking(.connecting("attempt"))
        #expect(
            dialling.receive(.upstreamDialled("second")) == [
                .cancelUpstreamAttempt("second"), .impossible(.dialWithUpstreamHeld),
            ])
        #expect(dialling.receive(.upstreamNeeded) == [.impossible(.upstreamNeededWithoutOne)], "not intercepting")

        var deferred = intercepting(.deferred)
        #expect(deferred.receive(.upstreamFailed("refused")) == [.impossible(.upstreamSettledWithoutAttempt)])
        #expect(deferred.receive(.upstreamTaken) == [.impossible(.upstreamTakenWithoutOne)])
        #expect(deferred.state == .reachingUpstream("interception", .deferred, until: reaching))
    }
}
