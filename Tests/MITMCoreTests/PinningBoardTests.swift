import Testing

@testable import MITMCore

/// The board is the report read host by host: each row names the expectation that decides for it and whether it holds.
@Suite struct PinningBoardTests {
    @Test func eachRowSaysItsExpectationWhetherItHoldsAndWhoTrustsTheCA() throws {
        var ledger = VerdictLedger(detailLimit: 10)
        ledger.record(
            FlowLogTests.verdict(connection: 1, .intercepted, .applicationData, host: "www.test"), replacing: nil)
        ledger.record(
            FlowLogTests.verdict(connection: 2, .refused, .closedAfterHandshake, host: "pinned.test"), replacing: nil)
        var stranger = FlowLogTests.verdict(connection: 3, .refused, .alert, host: "other.test")
        stranger.client = "10.0.0.9"
        ledger.record(stranger, replacing: nil)
        let expectations = [
            Expectation(.refused, try HostPattern("pinned.test")), Expectation(.intercepted, try HostPattern("*.test")),
            Expectation(.refused, try HostPattern("api.test")),
        ]
        let report = VerdictReport(
            final: false, listen: "127.0.0.1:8888", caCertificate: "ca.pem", silenceWindowSeconds: 3,
            ledger: ledger, expectations: expectations)
        let board = PinningBoard(report, expectations: expectations, droppedEvents: 2)
        let rows = Dictionary(uniqueKeysWithValues: board.rows.map { ($0.host, $0) })
        let pinned = try #require(rows["pinned.test"])
        #expect(pinned.verdict == "refused")
        #expect(pinned.expectation == "refused:pinned.test", "the exact name decides, not *.test")
        #expect(pinned.holds == true)
        #expect(pinned.connections == "1 refused (closed-after-handshake 1)")
        #expect(pinned.clients == [.init(address: "127.0.0.1", name: "127.0.0.1", trustsCA: true)])
        let other = try #require(rows["other.test"])
        #expect(other.expectation == "intercepted:*.test")
        #expect(other.holds == false)
        #expect(other.clients == [.init(address: "10.0.0.9", name: "10.0.0.9", trustsCA: false)])
        let unseen = try #require(rows["api.test"])
        #expect(unseen.verdict == "unseen")
        #expect(unseen.holds == false)
        #expect(board.result == "fail")
        #expect(board.droppedEvents == 2)
    }
}
