import Foundation
import Testing

@testable import MITMCore

@Suite struct ExpectationTests {
    private func connection(
        _ id: Int, _ host: String, _ kind: VerdictKind, _ reason: VerdictReason, alert: String? = nil,
        port: Int = 443, client: String = "127.0.0.1"
    ) -> ConnectionVerdict {
        ConnectionVerdict(
            connectionID: id, host: host, port: port, verdict: Verdict(kind: kind, reason: reason, alert: alert),
            tlsVersion: nil,
            alpn: nil, offeredALPN: [], shownCertificatePin: "pin", startedAt: Date(), handshakeMilliseconds: nil,
            decidedAt: Date(), client: client)
    }

    private func evaluate(_ texts: [String], _ connections: [ConnectionVerdict], allowUnproven: Bool = false) throws
        -> [ExpectationResult]
    {
        var ledger = VerdictLedger(detailLimit: 10)
        for connection in connections { ledger.record(connection, replacing: nil) }
        return ExpectationCheck(
            try texts.map { try Expectation(parsing: $0) }, provenClients: ledger.provenClients,
            allowUnprovenRefusals: allowUnproven
        ).evaluate(ledger.hostVerdicts)
    }

    @Test func hostAggregateFollowsTheDesignRules() {
        let hosts = HostVerdict.aggregate([
            connection(1, "a.test", .refused, .alert), connection(2, "a.test", .intercepted, .applicationData),
            connection(3, "b.test", .refused, .alert), connection(4, "b.test", .refused, .closedAfterHandshake),
            connection(5, "c.test", .refused, .alert), connection(6, "c.test", .inconclusive, .idle),
            connection(7, "d.test", .failed, .negotiation),
        ])
        #expect(hosts.map(\.verdict) == [.intercepted, .refused, .inconclusive, .inconclusive])
        #expect(hosts[1].attempts == 2)
        #expect(hosts[1].how == ["alert", "closed-after-handshake"])
        #expect(VerdictText.counts(hosts[1]) == "2 refused (alert 1, closed-after-handshake 1)")
    }

    @Test func refusedNeedsEveryMatchingHostRefusedAndAtLeastOneSeen() throws {
        let connections = [
            connection(1, "api.example.com", .refused, .alert), connection(2, "cdn.example.com", .inconclusive, .idle),
            connection(3, "www.other.com", .intercepted, .applicationData),
        ]
        #expect(try evaluate(["refused:api.example.com"], connections)[0].met)
        #expect(!(try evaluate(["refused:*.example.com"], connections)[0].met))
        #expect(try evaluate(["intercepted:www.other.com"], connections)[0].met)
        let unseen = try evaluate(["refused:pinned.example.com"], connections)[0]
        #expect(!unseen.met)
        #expect(unseen.explanation.contains("unseen"))
    }

    @Test func malformedExpectationsSayWhatIsWrong() {
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "refused") }
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "blocked:a.test") }
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "refused:a.*.test") }
    }

    @Test func theReportListsUnseenExpectedHostsAndTheResult() throws {
        let report = VerdictReport(
            final: true, listen: "127.0.0.1:1", caCertificate: "/ca.pem", silenceWindowSeconds: 3,
            connections: [
                connection(1, "a.test", .refused, .alert), connection(2, "c.test", .intercepted, .applicationData),
            ],
            expectations: [try Expectation(parsing: "refused:a.test"), try Expectation(parsing: "intercepted:b.test")])
        #expect(report.result == "fail")
        #expect(report.hosts.map(\.verdict) == [.refused, .intercepted, .unseen])
        let decoded = try VerdictReport.decode(try report.encoded())
        #expect(decoded.seenHosts.map(\.host) == ["a.test", "c.test"])
        #expect(decoded.expectations.map(\.met) == [true, false])
    }

    @Test func eventLinesCarryTheCommonFields() throws {
        let line = EventLine(.verdict(connection(9, "a.test", .refused, .alert)), time: Date(timeIntervalSince1970: 0))
            .json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "verdict")
        #expect(object["connection"] as? Int == 9)
        #expect(object["host"] as? String == "a.test")
        #expect(object["port"] as? Int == 443)
        #expect(object["verdict"] as? String == "refused")
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
    }

    // Issue 10, observation 1: a refusal by a client that never accepted the CA proves nothing.
    @Test func aRefusalWithoutAnyInterceptionByTheSameClientProvesNothing() throws {
        let alone = try evaluate(
            ["refused:api.bank.test"], [connection(1, "api.bank.test", .refused, .alert, alert: "unknown_ca")])
        #expect(!alone[0].met)
        #expect(
            alone[0].explanation.contains(
                "nothing proven for this client: 127.0.0.1 refused api.bank.test (alert unknown_ca) without ever accepting"
            ))
        let otherClient = try evaluate(
            ["refused:api.bank.test"],
            [
                connection(1, "api.bank.test", .refused, .alert, alert: "unknown_ca"),
                connection(2, "www.bank.test", .intercepted, .applicationData, client: "10.0.0.9"),
            ])
        #expect(!otherClient[0].met, "proof from another device proves nothing about this one")
        let proven = try evaluate(
            ["refused:api.bank.test"],
            [
                connection(1, "api.bank.test", .refused, .closedAfterHandshake),
                connection(2, "www.bank.test", .intercepted, .applicationData),
            ])
        #expect(proven[0].met)
        let waived = try evaluate(
            ["refused:api.bank.test"], [connection(1, "api.bank.test", .refused, .alert, alert: "unknown_ca")],
            allowUnproven: true)
        #expect(waived[0].met)
        #expect(waived[0].explanation.contains("UNPROVEN"))
    }

    // Observation 5: a port in an expectation could never match.
    @Test func anExpectationWithAPortIsRejectedUpFront() {
        for text in ["intercepted:api.bank.test:443", "refused:*.bank.test:8443", "refused:[::1]:443"] {
            #expect(throws: ExpectationError.self, "\(text)") { try Expectation(parsing: text) }
        }
        #expect((try? Expectation(parsing: "refused:::1")) != nil, "a bare IPv6 literal is a host")
    }

    // Observation 6: the most specific pattern decides for a host.
    @Test func theMostSpecificPatternWins() throws {
        let connections = [
            connection(1, "api.bank.test", .refused, .closedAfterHandshake),
            connection(2, "www.bank.test", .intercepted, .applicationData),
            connection(3, "cdn.bank.test", .intercepted, .applicationData),
        ]
        let results = try evaluate(["refused:api.bank.test", "intercepted:*.bank.test"], connections)
        #expect(results.map(\.met) == [true, true], "\(results)")
        #expect(results[1].hosts.keys.sorted() == ["cdn.bank.test", "www.bank.test"])
        let onlyPinned = try evaluate(
            ["refused:api.bank.test", "intercepted:*.bank.test"],
            [
                connection(1, "api.bank.test", .refused, .alert),
                connection(2, "x.other.test", .intercepted, .applicationData),
            ])
        #expect(onlyPinned[1].met == false)
        #expect(onlyPinned[1].explanation.contains("more specific expectation"))
    }

    // Observation 8: mixed results and ports are shown, not hidden.
    @Test func theTableCountsEachKindAndKeepsPortsApart() {
        let hosts = HostVerdict.aggregate([
            connection(1, "mix.test", .refused, .closedAfterHandshake),
            connection(2, "mix.test", .refused, .closedAfterHandshake),
            connection(3, "mix.test", .refused, .alert, alert: "unknown_ca"),
            connection(4, "mix.test", .intercepted, .applicationData),
            connection(5, "mix.test", .intercepted, .applicationData),
            connection(6, "mix.test", .intercepted, .applicationData),
            connection(7, "two.test", .refused, .alert, alert: "bad_certificate", port: 443),
            connection(8, "two.test", .intercepted, .applicationData, port: 8443),
        ])
        let table = VerdictText.table(hosts, expectations: [])
        #expect(
            table.contains(
                "mix.test       intercepted   3 refused (closed-after-handshake 2, alert unknown_ca 1), 3 intercepted"),
            "\(table)")
        #expect(table.contains("two.test:443   refused       1 refused (alert bad_certificate 1)"), "\(table)")
        #expect(table.contains("two.test:8443  intercepted   1 intercepted"), "\(table)")
    }

    @Test func theLedgerKeepsABoundedWindowAndCountsEveryConnection() {
        var ledger = VerdictLedger(detailLimit: 3)
        for id in 1...10 {
            ledger.record(connection(id, "a.test", id % 2 == 0 ? .intercepted : .refused, .alert), replacing: nil)
        }
        #expect(ledger.connections.map(\.connectionID) == [8, 9, 10])
        #expect(ledger.omittedConnections == 7)
        #expect(ledger.hostVerdicts[0].attempts == 10)
        #expect((ledger.hostVerdicts[0].counts[.intercepted], ledger.hostVerdicts[0].counts[.refused]) == (5, 5))
        var upgraded = connection(9, "a.test", .intercepted, .applicationData)
        upgraded.verdict.detail = "late"
        ledger.record(upgraded, replacing: Verdict(kind: .refused, reason: .alert))
        #expect((ledger.hostVerdicts[0].counts[.intercepted], ledger.hostVerdicts[0].counts[.refused]) == (6, 4))
        #expect(ledger.connections.map(\.verdict.kind) == [.intercepted, .intercepted, .intercepted])
    }

    @Test func aVerdictUpgradedToInterceptedNoLongerSaysHowItWasRefused() {
        var ledger = VerdictLedger(detailLimit: 10)
        ledger.record(connection(1, "a.test", .inconclusive, .idle), replacing: nil)
        ledger.record(connection(2, "a.test", .refused, .alert), replacing: nil)
        #expect(ledger.hostVerdicts[0].how.count == 2)
        #expect(ledger.hostVerdicts[0].refusedBy.count == 1)
        ledger.record(
            connection(1, "a.test", .intercepted, .applicationData),
            replacing: Verdict(kind: .inconclusive, reason: .idle))
        ledger.record(
            connection(2, "a.test", .intercepted, .applicationData), replacing: Verdict(kind: .refused, reason: .alert))
        let host = ledger.hostVerdicts[0]
        #expect(host.verdict == .intercepted)
        #expect(host.how.isEmpty, "stale ways: \(host.how)")
        #expect(host.refusedBy.isEmpty, "stale refusing clients: \(host.refusedBy)")
    }

    // Observation 11: no DecodingError text.
    @Test func aHARIsNotAReportAndTheErrorSaysSoInWords() {
        let har = Data(#"{"log": {"version": "1.2", "entries": []}}"#.utf8)
        #expect {
            try VerdictReport.decode(har)
        } throws: { error in
            let text = String(describing: error)
            return text.contains("no \"result\" field") && text.contains("looks like a HAR file")
                && !text.contains("DecodingError")
        }
        #expect(throws: ReportDecodingError.self) { try VerdictReport.decode(Data("not json".utf8)) }
    }
}

@Suite struct AuditExpectationKindTests {
    @Test func validatesAndPinnedParseButOnlyAnAuditDecidesThem() throws {
        let pinned = try Expectation(parsing: "pinned:a.test")
        #expect(pinned.outcome.isAuditConclusion)
        let result = ExpectationCheck([pinned], provenClients: []).evaluate([])[0]
        #expect(!result.met)
        #expect(result.explanation.contains("only `mitm-proxy audit`"))
    }
}
