import Testing

@testable import MITMCore
@testable import MITMProxy

/// Stand-ins for the engine's objects: the machine only keeps and hands them back (here and in FirstContactMachineTests).
enum NamedParts: EquatableConnectionParts {
    typealias Tunnel = String
    typealias PooledUpstream = String
    typealias UpstreamAttempt = String
    typealias UpstreamConnection = String
    typealias UpstreamFailure = String
    typealias Interception = String
    typealias HandshakeLeg = String
    typealias Upstream = String
    typealias Relay = String
}

private typealias Life = ConnectionLife<NamedParts>

private let second: UInt64 = 1_000_000_000
private let timeouts = Life.Timeouts(handshake: .seconds(10), idle: .seconds(60), upstreamPark: .milliseconds(500))
private let target = TunnelTarget(host: "api.test", port: 443)

private func deadline(_ seconds: UInt64, _ reason: TimeoutReason) -> ConnectionDeadline {
    ConnectionDeadline(at: seconds * second, reason: reason)
}

/// A connection accepted at 0 s that took `steps` (whose actions are the connection's to perform).
private func lifeAfter(_ steps: [Life.Event]) -> Life {
    var life = Life(timeouts: timeouts, now: 0)
    for event in steps {
        let impossible = life.receive(event).filter { if case .impossible = $0 { true } else { false } }
        #expect(impossible.isEmpty, "setting up with \(event)")
    }
    return life
}

/// The tunnel is answered at 1 s, its upstream being dialled.
private var peeking: [Life.Event] {
    [.tunnelAnswered("tunnel", target, upstream: .connecting("attempt"), now: 1 * second)]
}
private var intercepting: [Life.Event] { peeking + [.interceptionStarted("interception", now: 2 * second)] }
private var upstreamHandshake: [Life.Event] {
    intercepting + [.upstreamConnected("socket"), .upstreamHandshakeStarted("upstream leg")]
}
private var clientHandshake: [Life.Event] {
    upstreamHandshake + [.clientHandshakeStarted("client leg", "ready", serverName: "www.api.test", now: 3 * second)]
}
private var relaying: [Life.Event] {
    clientHandshake + [.relayStarted("http1", for: .interception("interception"), headDeadline: nil, now: 4 * second)]
}

@Suite struct ConnectionLifeMachineTests {
    @Test func aNewConnectionReadsTheProxyRequestWithinTheHandshakeTimeout() {
        let life = Life(timeouts: timeouts, now: 5 * second)
        #expect(life.state == .readingRequest(until: deadline(15, .proxyRequest)))
        #expect(life.deadline == deadline(15, .proxyRequest))
        #expect(!life.isClosed)
    }

    @Test func socksKeepsTheRequestsDeadlineAndOpensATunnel() {
        var life = lifeAfter([])
        let handshake = SOCKS5Handshake(requiresCredentials: false)
        #expect(life.receive(.socksProgressed(handshake)) == [])
        #expect(life.state == .negotiatingSOCKS(handshake, until: deadline(10, .proxyRequest)))
        #expect(life.receive(.tunnelAnswered("tunnel", target, upstream: .deferred, now: 1 * second)) == [])
        #expect(
            life.state
                == .peeking("tunnel", .deferred, until: deadline(11, .firstTunnelBytes(host: "api.test", port: 443))))
    }

    @Test func aClientOnAnotherMachineWaitsForTheUpstreamBeforeTheAnswer() {
        var life = lifeAfter([])
        #expect(life.receive(.targetAwaited("tunnel", target, dialled: "attempt", now: 2 * second)) == [])
        #expect(
            life.state
                == .awaitingTarget(
                    "tunnel", .connecting("attempt"), until: deadline(12, .upstream(host: "api.test", port: 443))))
        #expect(life.receive(.upstreamConnected("socket")) == [.answerTarget("tunnel", failure: nil)])
        #expect(life.receive(.targetAnswered(now: 3 * second)) == [.watchServerFirst("tunnel", "socket")])
        #expect(
            life.state
                == .peeking(
                    "tunnel", .connected("socket"), until: deadline(13, .firstTunnelBytes(host: "api.test", port: 443)))
        )
    }

    @Test func aRawTunnelKeepsThePeeksDeadlineUntilItsRelayStarts() {
        var life = lifeAfter(peeking)
        #expect(life.receive(.rawTunnelChosen) == [])
        #expect(
            life.state
                == .awaitingRawUpstream(
                    "tunnel", .connecting("attempt"),
                    until: deadline(11, .firstTunnelBytes(host: "api.test", port: 443))))
        #expect(life.receive(.upstreamConnected("socket")) == [.relayRawTunnel("tunnel", "socket")])
        #expect(life.receive(.relayStarted("raw", for: .tunnel("tunnel"), headDeadline: nil, now: 5 * second)) == [])
        #expect(life.state == .relaying("raw", for: .tunnel("tunnel")))
        #expect(life.deadline == deadline(65, .idle))
        #expect(
            life.receive(.relayClosed(reason: "done")) == [
                .relayEnded("raw", for: .tunnel("tunnel"), reason: "done"), .leaveRegistry,
            ])
        #expect(life.state == .closed)
        #expect(life.deadline == nil)
    }

    @Test func anInterceptionGoesThroughItsStagesEachWithItsDeadline() {
        var life = lifeAfter(peeking)
        #expect(life.receive(.interceptionStarted("interception", now: 2 * second)) == [])
        #expect(
            life.state
                == .reachingUpstream(
                    "interception", .connecting("attempt"), until: deadline(12, .upstream(host: "api.test", port: 443)))
        )
        #expect(life.receive(.upstreamConnected("socket")) == [.secureUpstream("interception", "socket")])
        #expect(life.receive(.upstreamHandshakeStarted("upstream leg")) == [])
        #expect(
            life.state
                == .upstreamHandshake(
                    "interception", "upstream leg", until: deadline(12, .upstream(host: "api.test", port: 443))))
        #expect(
            life.receive(.clientHandshakeStarted("client leg", "ready", serverName: "www.api.test", now: 3 * second))
                == [])
        #expect(
            life.state
                == .clientHandshake(
                    "interception", "client leg", "ready", until: deadline(13, .clientHandshake(host: "www.api.test"))))
        #expect(
            life.receive(.relayStarted("http1", for: .interception("interception"), headDeadline: nil, now: 4 * second))
                == [])
        #expect(life.state == .relaying("http1", for: .interception("interception")))
        #expect(life.deadline == deadline(64, .idle))
    }

    @Test func aPooledOrSharedUpstreamGoesStraightToTheClientsHandshake() {
        var life = lifeAfter([
            .tunnelAnswered("tunnel", target, upstream: .pooled("pooled"), now: 1 * second),
            .interceptionStarted("interception", now: 2 * second), .upstreamTaken,
        ])
        #expect(
            life.receive(.clientHandshakeStarted("client leg", "shared", serverName: "api.test", now: 2 * second)) == []
        )
        #expect(life.deadline == deadline(12, .clientHandshake(host: "api.test")))
    }

    @Test func plainRequestsAndTheWebUIRelayFromTheRequest() {
        var life = lifeAfter([])
        #expect(life.receive(.relayStarted("web", for: .webUI, headDeadline: nil, now: 1 * second)) == [])
        #expect(life.state == .relaying("web", for: .webUI))
        #expect(life.deadline == deadline(61, .idle))
    }

    @Test func aRequestHeadsDeadlineWinsWhenSooner() {
        var life = lifeAfter([.relayStarted("http1", for: .plainRequests, headDeadline: 30 * second, now: 1 * second)])
        #expect(life.deadline == deadline(30, .idle))
        #expect(life.receive(.relayActivity(headDeadline: nil, now: 2 * second)) == [])
        #expect(life.deadline == deadline(62, .idle))
        #expect(life.receive(.relayActivity(headDeadline: 90 * second, now: 3 * second)) == [])
        #expect(life.deadline == deadline(63, .idle))
    }

    @Test func anUpgradeKeepsWhatTheRelayCarries() {
        var life = lifeAfter(relaying)
        #expect(life.receive(.relayUpgraded("raw", now: 9 * second)) == [])
        #expect(life.state == .relaying("raw", for: .interception("interception")))
        #expect(life.deadline == deadline(69, .idle))
    }

    // MARK: deadlines

    @Test func theRequestsDeadlineTimesOutWithoutAHost() {
        var life = lifeAfter([])
        let actions = life.receive(.deadlinePassed(now: 10 * second))
        #expect(
            actions == [
                .reportTimeout(host: nil, waitingFor: "reading the proxy request"), .closeClient, .leaveRegistry,
            ])
        #expect(life.state == .closed)
    }

    @Test func aPeekTimesOutNamingTheTunnelAndDropsItsUpstream() {
        var life = lifeAfter([.tunnelAnswered("tunnel", target, upstream: .pooled("pooled"), now: 1 * second)])
        let actions = life.receive(.deadlinePassed(now: 11 * second))
        #expect(
            actions == [
                .reportTimeout(
                    host: "api.test", waitingFor: "waiting for the client's first bytes in the tunnel to api.test:443"),
                .closePooledUpstream("pooled"), .closeClient, .leaveRegistry,
            ])
    }

    @Test func anUpstreamStillConnectingPostponesTheDeadlineByASecond() {
        var life = lifeAfter(intercepting)
        #expect(life.receive(.deadlinePassed(now: 12 * second)) == [])
        #expect(
            life.state
                == .reachingUpstream(
                    "interception", .connecting("attempt"), until: deadline(13, .upstream(host: "api.test", port: 443)))
        )
        var deferred = lifeAfter([
            .tunnelAnswered("tunnel", target, upstream: .deferred, now: 1 * second),
            .interceptionStarted("interception", now: 2 * second),
        ])
        let actions = deferred.receive(.deadlinePassed(now: 12 * second))
        #expect(
            actions == [
                .reportTimeout(host: "api.test", waitingFor: "connecting to api.test:443"),
                .abandonInterception("interception"),
                .closeClient, .leaveRegistry,
            ])
    }

    @Test func anUpstreamHandshakeWithoutAnswerIsAbandonedForTheClientsSake() {
        var life = lifeAfter(upstreamHandshake)
        let actions = life.receive(.deadlinePassed(now: 12 * second))
        #expect(
            actions == [
                .abandonUpstreamHandshake(
                    "interception", "upstream leg", reason: "TLS handshake timed out (no answer within 10 s)")
            ])
        #expect(
            life.receive(.clientHandshakeStarted("client leg", "failed", serverName: "api.test", now: 12 * second))
                == [])
    }

    @Test func aClientHandshakeTimeoutIsAClientTLSFailureAndLetsGoOfEverything() {
        var life = lifeAfter(clientHandshake)
        let actions = life.receive(.deadlinePassed(now: 13 * second))
        #expect(
            actions == [
                .reportTimeout(host: "api.test", waitingFor: "the client's TLS handshake for www.api.test"),
                .reportClientHandshakeFailure(
                    host: "www.api.test", port: 443, reason: "the client did not finish the TLS handshake within 10 s"),
                .closeHandshakeLeg("client leg"), .releaseUpstream("ready"), .abandonInterception("interception"),
                .closeClient, .leaveRegistry,
            ])
    }

    @Test func anIdleRelayIsAskedFirst() {
        var life = lifeAfter(relaying)
        #expect(
            life.receive(.deadlinePassed(now: 64 * second)) == [
                .offerDeadlineToRelay("http1", otherwise: "idle for 60 s")
            ])
        #expect(life.state == .relaying("http1", for: .interception("interception")))
        #expect(life.deadline == deadline(64, .idle))
    }

    @Test func lingeringEndsAtItsDeadline() {
        var life = lifeAfter(relaying)
        #expect(life.receive(.linger(seconds: 2, now: 5 * second)) == [])
        #expect(life.state == .relaying("http1", for: .interception("interception")))
        #expect(life.deadline == deadline(7, .lingering))
        #expect(
            life.receive(.deadlinePassed(now: 7 * second)) == [
                .closeRelay("http1", reason: "done"), .closeClient, .leaveRegistry,
            ])
        #expect(life.state == .closing("http1", for: .interception("interception")))
        #expect(life.isClosed)
    }

    @Test func lingeringBeforeARelayLetsGoOfTheTunnel() {
        var life = lifeAfter(peeking + [.rawTunnelChosen])
        #expect(life.receive(.linger(seconds: 2, now: 5 * second)) == [.cancelUpstreamAttempt("attempt")])
        #expect(life.state == .lingering(until: deadline(7, .lingering)))
        #expect(
            life.receive(.deadlinePassed(now: 7 * second)) == [.closeClient, .leaveRegistry])
    }

    @Test func aClosedConnectionHasNoDeadline() {
        var life = Life(timeouts: timeouts, now: 0)
        #expect(life.receive(.close(reason: "client closed the connection")) == [.closeClient, .leaveRegistry])
        #expect(life.receive(.deadlinePassed(now: 100 * second)) == [])
        #expect(life.receive(.close(reason: "again")) == [])
    }

    // MARK: sweep

    @Test func aSilentRelayOffersItsUpstreamAndCompactsOnceEachPerSilence() {
        var life = lifeAfter([.relayStarted("http1", for: .plainRequests, headDeadline: nil, now: 10 * second)])
        #expect(life.receive(.swept(now: 10 * second + second / 4)) == [])
        #expect(life.receive(.swept(now: 10 * second + second / 2)) == [.offerIdleUpstream("http1")])
        #expect(life.receive(.swept(now: 10 * second + 3 * second / 4)) == [])
        #expect(life.receive(.swept(now: 11 * second)) == [.compact("http1")])
        #expect(life.receive(.swept(now: 20 * second)) == [])
        #expect(life.receive(.relayActivity(headDeadline: nil, now: 21 * second)) == [])
        #expect(life.receive(.swept(now: 22 * second)) == [.offerIdleUpstream("http1"), .compact("http1")])
    }

    @Test func theSweepLeavesOtherStatesAlone() {
        var life = lifeAfter(clientHandshake)
        #expect(life.receive(.swept(now: 100 * second)) == [])
        var early = Life(timeouts: timeouts, now: 0)
        _ = early.receive(.relayStarted("raw", for: .plainRequests, headDeadline: nil, now: 5 * second))
        #expect(early.receive(.swept(now: 4 * second)) == [], "a sweep that read the clock before the activity")
    }

    // MARK: closing

    @Test func closingARelayWaitsForItsReportThenLogsWhatItCarried() {
        var life = lifeAfter(
            peeking + [
                .rawTunnelChosen, .upstreamConnected("socket"),
                .relayStarted("raw", for: .tunnel("tunnel"), headDeadline: nil, now: 5 * second),
            ])
        #expect(
            life.receive(.close(reason: "proxy stopping")) == [
                .closeRelay("raw", reason: "proxy stopping"), .closeClient, .leaveRegistry,
            ])
        #expect(
            life.receive(.relayActivity(headDeadline: nil, now: 6 * second)) == [],
            "the relay's last bytes while it closes")
        #expect(
            life.receive(.relayClosed(reason: "proxy stopping")) == [
                .relayEnded("raw", for: .tunnel("tunnel"), reason: "proxy stopping"), .leaveRegistry,
            ])
        #expect(life.state == .closed)
    }

    @Test func closingMidHandshakeLetsGoOfLegsUpstreamAndVerdict() {
        var life = lifeAfter(upstreamHandshake)
        #expect(
            life.receive(.close(reason: "client closed the connection")) == [
                .closeHandshakeLeg("upstream leg"), .abandonInterception("interception"), .closeClient, .leaveRegistry,
            ])
        var awaiting = lifeAfter([.targetAwaited("tunnel", target, dialled: "attempt", now: 0)])
        #expect(
            awaiting.receive(.close(reason: "client closed the connection")) == [
                .cancelUpstreamAttempt("attempt"), .closeClient, .leaveRegistry,
            ])
    }

    // MARK: impossible events

    @Test func eventsOutOfOrderAreNamed() {
        var reading = lifeAfter([])
        #expect(reading.receive(.rawTunnelChosen) == [.impossible(.rawTunnelWithoutPeeking)])
        #expect(
            reading.receive(.interceptionStarted("interception", now: 0)) == [.impossible(.interceptionWithoutPeeking)])
        #expect(reading.receive(.upstreamHandshakeStarted("leg")) == [.impossible(.upstreamHandshakeOutsideReaching)])
        #expect(
            reading.receive(.clientHandshakeStarted("leg", "ready", serverName: "api.test", now: 0)) == [
                .impossible(.clientHandshakeOutsideInterception)
            ])
        #expect(reading.receive(.relayUpgraded("raw", now: 0)) == [.impossible(.upgradeWithoutARelay)])
        #expect(reading.receive(.relayActivity(headDeadline: nil, now: 0)) == [.impossible(.activityWithoutARelay)])
        #expect(reading.receive(.relayClosed(reason: "done")) == [.impossible(.relayClosedWithoutARelay)])
        #expect(
            reading.state == .readingRequest(until: deadline(10, .proxyRequest)), "an impossible event changes nothing")

        var peekingLife = lifeAfter(peeking)
        #expect(
            peekingLife.receive(.socksProgressed(SOCKS5Handshake(requiresCredentials: false))) == [
                .impossible(.socksOutsideTheRequest)
            ])
        #expect(
            peekingLife.receive(.tunnelAnswered("other", target, upstream: .pooled("pooled"), now: 0)) == [
                .closePooledUpstream("pooled"), .impossible(.tunnelOutsideTheRequest),
            ])
        #expect(
            peekingLife.receive(.targetAwaited("other", target, dialled: "other attempt", now: 0)) == [
                .cancelUpstreamAttempt("other attempt"), .impossible(.tunnelOutsideTheRequest),
            ])

        var handshaking = lifeAfter(upstreamHandshake)
        #expect(
            handshaking.receive(.relayStarted("http1", for: .plainRequests, headDeadline: nil, now: 0)) == [
                .impossible(.relayFromWrongPhase)
            ])
        #expect(
            handshaking.receive(.upstreamHandshakeStarted("again")) == [.impossible(.upstreamHandshakeOutsideReaching)])

        var relayingLife = lifeAfter(relaying)
        #expect(
            relayingLife.receive(.relayStarted("http2", for: .webUI, headDeadline: nil, now: 0)) == [
                .impossible(.relayFromWrongPhase)
            ])
        #expect(
            relayingLife.receive(.clientHandshakeStarted("leg", "ready", serverName: "api.test", now: 0)) == [
                .impossible(.clientHandshakeOutsideInterception)
            ])

        var closed = Life(timeouts: timeouts, now: 0)
        _ = closed.receive(.close(reason: "done"))
        #expect(closed.receive(.linger(seconds: 2, now: 0)) == [.impossible(.lingerAfterClose)])
        #expect(closed.receive(.relayClosed(reason: "done")) == [.impossible(.relayClosedWithoutARelay)])
    }
}
