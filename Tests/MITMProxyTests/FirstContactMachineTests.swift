import MITMTLS
import Testing

@testable import MITMCore
@testable import MITMProxy

private typealias Life = ConnectionLife<NamedParts>

private let second: UInt64 = 1_000_000_000
private let api = TunnelTarget(host: "api.test", port: 443)
private let timeouts = Life.Timeouts(handshake: .seconds(10), idle: .seconds(60), upstreamPark: .milliseconds(500))

/// A connection that started both handshakes at 3 s, its upstream still connecting.
private func overlapping() -> Life {
    var life = Life(timeouts: timeouts, now: 0)
    for event: Life.Event in [
        .tunnelAnswered("tunnel", api, upstream: .connecting("attempt"), now: 1 * second),
        .interceptionStarted("interception", now: 2 * second),
        .overlapStarted("client leg", serverName: "api.test", now: 3 * second),
    ] {
        #expect(life.receive(event) == [], "setting up with \(event)")
    }
    return life
}

/// The overlapped handshakes and the memo that decides when they may overlap.
@Suite struct FirstContactMachineTests {
    @Test func theClientsHandshakeStartsWhileTheUpstreamIsReached() {
        var life = overlapping()
        #expect(life.reachesUpstream)
        #expect(life.deadline == ConnectionDeadline(at: 13 * second, reason: .clientHandshake(host: "api.test")))
        #expect(life.receive(.upstreamConnected("socket")) == [.secureUpstream("interception", "socket")])
        #expect(life.reachesUpstream, "until its TLS handshake starts")
        #expect(life.receive(.upstreamHandshakeStarted("upstream leg")) == [])
        #expect(!life.reachesUpstream)
        let both = Life.Overlap(clientDone: false, upstream: .handshaking("upstream leg"))
        #expect(life.state == .overlapping("interception", client: "client leg", both, until: life.deadline!))
    }

    @Test func theRelayStartsWhenTheLaterOfTheTwoHandshakesEnds() {
        var upstreamFirst = overlapping()
        #expect(upstreamFirst.receive(.upstreamConnected("socket")) == [.secureUpstream("interception", "socket")])
        #expect(upstreamFirst.receive(.overlappedUpstreamSettled("ready")) == [])
        #expect(
            upstreamFirst.receive(.overlappedClientDone(now: 4 * second)) == [
                .relayOverlapped("interception", client: "client leg", upstream: "ready")
            ])
        var clientFirst = overlapping()
        #expect(clientFirst.receive(.overlappedClientDone(now: 4 * second)) == [])
        #expect(
            clientFirst.deadline == ConnectionDeadline(at: 14 * second, reason: .upstream(host: "api.test", port: 443)))
        #expect(
            clientFirst.receive(.upstreamFailed("refused")) == [.interceptionUnreachable("interception", "refused")])
        #expect(
            clientFirst.receive(.overlappedUpstreamSettled("failed: refused")) == [
                .relayOverlapped("interception", client: "client leg", upstream: "failed: refused")
            ])
        let relayed = Life.Event.relayStarted("http1", for: .interception("interception"), headDeadline: nil, now: 5)
        #expect(clientFirst.receive(relayed) == [])
    }

    @Test func aClientThatGivesUpDuringTheOverlapClosesTheUpstreamToo() {
        var life = overlapping()
        #expect(life.receive(.upstreamConnected("socket")) == [.secureUpstream("interception", "socket")])
        #expect(life.receive(.upstreamHandshakeStarted("upstream leg")) == [])
        #expect(
            life.receive(.close(reason: "client TLS handshake failed")) == [
                .closeHandshakeLeg("client leg"), .closeHandshakeLeg("upstream leg"),
                .abandonInterception("interception"),
                .closeClient, .leaveRegistry,
            ])
    }

    @Test func aSlowClientTimesOutAsInTheClientHandshake() {
        var life = overlapping()
        let actions = life.receive(.deadlinePassed(now: 13 * second))
        #expect(
            actions.contains(
                .reportClientHandshakeFailure(
                    host: "api.test", port: 443, reason: "the client did not finish the TLS handshake within 10 s")))
        #expect(actions.contains(.cancelUpstreamAttempt("attempt")), "the connect under way goes too")
        #expect(life.state == .closed)
    }

    @Test func aSilentUpstreamAfterTheClientsHandshakeIsAbandonedAsAnUpstreamFailure() {
        var life = overlapping()
        #expect(life.receive(.upstreamConnected("socket")) == [.secureUpstream("interception", "socket")])
        #expect(life.receive(.upstreamHandshakeStarted("upstream leg")) == [])
        #expect(life.receive(.overlappedClientDone(now: 4 * second)) == [])
        #expect(
            life.receive(.deadlinePassed(now: 14 * second)) == [
                .abandonUpstreamHandshake(
                    "interception", "upstream leg", reason: "TLS handshake timed out (no answer within 10 s)")
            ])
        #expect(life.receive(.overlappedUpstreamSettled("failed: timed out")).count == 1)
    }

    @Test func anUpstreamStillConnectingKeepsItsOwnTimer() {
        var life = overlapping()
        #expect(life.receive(.overlappedClientDone(now: 4 * second)) == [])
        #expect(life.receive(.deadlinePassed(now: 14 * second)) == [])
        #expect(life.deadline?.at == 15 * second)
    }

    @Test func overlapEventsOutsideAnOverlapAreImpossible() {
        var life = Life(timeouts: timeouts, now: 0)
        #expect(life.receive(.overlappedClientDone(now: 1)) == [.impossible(.overlapEventOutsideOverlap)])
        #expect(
            life.receive(.overlapStarted("leg", serverName: "api.test", now: 1)) == [
                .impossible(.overlapOutsideReaching)
            ])
    }

    @Test func theMemoOverlapsWhenTheProtocolIsKnown() {
        let key = FirstContactMemo.Key(host: "api.test", port: 443, serverName: "www.api.test")
        var memo = FirstContactMemo()
        let sni: [SubjectAlternativeName] = [.dns("www.api.test")]
        #expect(memo.plan(key, upstreamOffer: ["http/1.1"]) == .overlap(names: sni, clientALPN: ["http/1.1"]))
        #expect(memo.plan(key, upstreamOffer: []) == .overlap(names: sni, clientALPN: []))
        #expect(memo.plan(key, upstreamOffer: ["h2", "http/1.1"]) == .sequential)
        let learned: [SubjectAlternativeName] = [.dns("www.api.test"), .dns("api.test")]
        memo.learn(key, names: learned, offered: ["h2", "http/1.1"], chose: "h2")
        #expect(memo.plan(key, upstreamOffer: ["h2", "http/1.1"]) == .overlap(names: learned, clientALPN: ["h2"]))
        #expect(memo.plan(key, upstreamOffer: ["h2"]) == .sequential)
        memo.learn(key, names: learned, offered: ["h2", "http/1.1"], chose: nil)
        #expect(memo.plan(key, upstreamOffer: ["h2", "http/1.1"]) == .overlap(names: learned, clientALPN: []))
    }

    @Test func onlyAChangeBetweenHTTP2AndHTTP1IsAProtocolChange() {
        #expect(FirstContactMemo.protocolChanged(clientGot: "h2", upstreamChose: "http/1.1"))
        #expect(FirstContactMemo.protocolChanged(clientGot: nil, upstreamChose: "h2"))
        #expect(!FirstContactMemo.protocolChanged(clientGot: "http/1.1", upstreamChose: nil))
        #expect(!FirstContactMemo.protocolChanged(clientGot: "h2", upstreamChose: "h2"))
    }
}
