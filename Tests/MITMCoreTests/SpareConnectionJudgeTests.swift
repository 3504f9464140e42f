import Testing
@testable import MITMCore

/// The spare-connection rules without sockets: events in, rulings out (issue 10, observation 10).
@Suite struct SpareConnectionJudgeTests {
    private let key = SpareConnectionJudge.Key(client: "127.0.0.1", host: "open.plain.test", port: 443)

    @Test func aConnectionClosedWhileItsSiblingIsInUseIsUnused() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        #expect(judge.receive(.intercepted(connection: 1, key: key, at: 10)).isEmpty)
        let rulings = judge.receive(.closedWithoutRequest(connection: 2, key: key, handshakeAt: 10.1, at: 11))
        #expect(rulings == [.unused(connection: 2, sibling: 1)])
        #expect(judge.heldCount == 0)
    }

    @Test func aCandidateWaitsForASiblingThatSpeaksAMomentLater() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        #expect(judge.receive(.closedWithoutRequest(connection: 2, key: key, handshakeAt: 10, at: 10.5)).isEmpty)
        #expect(judge.nextDeadline == 13.5)
        #expect(judge.receive(.tick(at: 12)).isEmpty)
        #expect(judge.receive(.intercepted(connection: 1, key: key, at: 12.5)) == [.unused(connection: 2, sibling: 1)])
        #expect(judge.nextDeadline == nil)
    }

    @Test func withoutASiblingInTheWindowTheRefusalStands() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.closedWithoutRequest(connection: 2, key: key, handshakeAt: 10, at: 10.5))
        #expect(judge.receive(.tick(at: 13.5)) == [.refused(connection: 2)])
        #expect(judge.receive(.intercepted(connection: 3, key: key, at: 14)).isEmpty, "ruled once")
    }

    @Test func siblingsMustShareClientHostAndPort() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.intercepted(connection: 1, key: .init(client: "10.0.0.2", host: key.host, port: 443), at: 10))
        _ = judge.receive(.intercepted(connection: 2, key: .init(client: key.client, host: "other.test", port: 443), at: 10))
        _ = judge.receive(.intercepted(connection: 3, key: .init(client: key.client, host: key.host, port: 8443), at: 10))
        #expect(judge.receive(.closedWithoutRequest(connection: 4, key: key, handshakeAt: 10, at: 11)).isEmpty)
        #expect(judge.receive(.tick(at: 14)) == [.refused(connection: 4)])
    }

    @Test func aSiblingClosedLongBeforeTheHandshakeDoesNotCount() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.intercepted(connection: 1, key: key, at: 1))
        _ = judge.receive(.closed(connection: 1, at: 2))
        #expect(judge.receive(.closedWithoutRequest(connection: 2, key: key, handshakeAt: 10, at: 10.5)).isEmpty)
        #expect(judge.receive(.tick(at: 13.5)) == [.refused(connection: 2)])
        let recent = SpareConnectionJudge.Key(client: "127.0.0.1", host: "recent.test", port: 443)
        _ = judge.receive(.intercepted(connection: 5, key: recent, at: 20))
        _ = judge.receive(.closed(connection: 5, at: 21))
        #expect(judge.receive(.closedWithoutRequest(connection: 6, key: recent, handshakeAt: 22, at: 22.5)) == [.unused(connection: 6, sibling: 5)])
    }

    @Test func stoppingRulesOnEveryHeldCandidate() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.closedWithoutRequest(connection: 7, key: key, handshakeAt: 1, at: 2))
        _ = judge.receive(.closedWithoutRequest(connection: 8, key: key, handshakeAt: 1, at: 2))
        #expect(judge.receive(.flush) == [.refused(connection: 7), .refused(connection: 8)])
    }
}
