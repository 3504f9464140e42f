import Testing

@testable import MITMCore

/// The spare-connection rules without sockets: events in, rulings out: a
/// connection is a spare only when an intercepted sibling of the same client to the same host and port was open at
/// the same time.
@Suite struct SpareConnectionJudgeTests {
    private let key = SpareConnectionJudge.Key(
        client: "127.0.0.1 t131512h2_aaa_bbb /usr/bin/curl", host: "open.plain.test", port: 443)

    @Test func aConnectionClosedWhileItsSiblingIsInUseIsUnused() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        #expect(judge.receive(.intercepted(connection: 1, key: key, openedAt: 10)).isEmpty)
        let rulings = judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 10.01, at: 11))
        #expect(rulings == [.unused(connection: 2, sibling: 1)])
        #expect(judge.heldCount == 0)
    }

    @Test func aCandidateWaitsForASiblingOpenedBeforeItClosedThatSpeaksAMomentLater() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        #expect(judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 10, at: 10.5)).isEmpty)
        #expect(judge.nextDeadline == 13.5)
        #expect(judge.receive(.tick(at: 12)).isEmpty)
        #expect(
            judge.receive(.intercepted(connection: 1, key: key, openedAt: 10.01)) == [
                .unused(connection: 2, sibling: 1)
            ])
        #expect(judge.nextDeadline == nil)
    }

    @Test func aSiblingOpenedAfterTheCandidateClosedDoesNotMakeItASpare() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 10, at: 10.5))
        #expect(judge.receive(.intercepted(connection: 3, key: key, openedAt: 11)).isEmpty)
        #expect(judge.receive(.tick(at: 13.5)) == [.refused(connection: 2)])
    }

    /// Issue 33, observation 2: a pinned client that follows an unpinned one to the same host, 0.01 s after it ended.
    @Test func aConnectionStartedAfterItsSiblingEndedIsJudgedOnItsOwn() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.intercepted(connection: 1, key: key, openedAt: 10))
        _ = judge.receive(.closed(connection: 1, at: 10.5))
        #expect(judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 10.51, at: 10.6)).isEmpty)
        #expect(judge.receive(.tick(at: 13.6)) == [.refused(connection: 2)])
    }

    @Test func aSiblingThatEndedWhileTheCandidateWasOpenCounts() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.intercepted(connection: 1, key: key, openedAt: 10))
        _ = judge.receive(.closed(connection: 1, at: 10.5))
        #expect(
            judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 10.02, at: 11)) == [
                .unused(connection: 2, sibling: 1)
            ])
    }

    @Test func withoutASiblingTheRefusalStands() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 10, at: 10.5))
        #expect(judge.receive(.tick(at: 13.5)) == [.refused(connection: 2)])
        #expect(judge.receive(.intercepted(connection: 3, key: key, openedAt: 10.1)).isEmpty, "ruled once")
    }

    /// Another client on the same address (another fingerprint or program) is never a sibling.
    @Test func siblingsMustShareClientHostAndPort() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        let python = SpareConnectionJudge.Key(
            client: "127.0.0.1 t131910h2_ccc_ddd /usr/bin/python3", host: key.host, port: 443)
        _ = judge.receive(.intercepted(connection: 1, key: python, openedAt: 10))
        _ = judge.receive(
            .intercepted(connection: 2, key: .init(client: key.client, host: "other.test", port: 443), openedAt: 10))
        _ = judge.receive(
            .intercepted(connection: 3, key: .init(client: key.client, host: key.host, port: 8443), openedAt: 10))
        #expect(judge.receive(.closedWithoutRequest(connection: 4, key: key, openedAt: 10, at: 11)).isEmpty)
        #expect(judge.receive(.tick(at: 14)) == [.refused(connection: 4)])
    }

    @Test func closedSiblingsAreForgottenAfterTheRetention() {
        var judge = SpareConnectionJudge(silenceWindow: 3, retention: 10)
        _ = judge.receive(.intercepted(connection: 1, key: key, openedAt: 1))
        _ = judge.receive(.closed(connection: 1, at: 2))
        _ = judge.receive(
            .closedWithoutRequest(connection: 9, key: .init(client: "x", host: "y", port: 1), openedAt: 20, at: 20))
        _ = judge.receive(.tick(at: 23))
        // Opened (by its record) before the sibling ended, but the sibling is long forgotten: judged on its own.
        #expect(judge.receive(.closedWithoutRequest(connection: 2, key: key, openedAt: 1.5, at: 24)).isEmpty)
        #expect(judge.receive(.tick(at: 27)) == [.refused(connection: 2)])
    }

    @Test func stoppingRulesOnEveryHeldCandidate() {
        var judge = SpareConnectionJudge(silenceWindow: 3)
        _ = judge.receive(.closedWithoutRequest(connection: 7, key: key, openedAt: 1, at: 2))
        _ = judge.receive(.closedWithoutRequest(connection: 8, key: key, openedAt: 1, at: 2))
        #expect(judge.receive(.flush) == [.refused(connection: 7), .refused(connection: 8)])
    }
}
