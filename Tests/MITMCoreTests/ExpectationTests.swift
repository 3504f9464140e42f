import Foundation
import Testing
@testable import MITMCore

@Suite struct ExpectationTests {
    private func connection(_ id: Int, _ host: String, _ kind: VerdictKind, _ reason: VerdictReason) -> ConnectionVerdict {
        ConnectionVerdict(connectionID: id, host: host, port: 443, verdict: Verdict(kind: kind, reason: reason), tlsVersion: nil,
                          alpn: nil, offeredALPN: [], shownCertificatePin: "pin", startedAt: Date(), handshakeMilliseconds: nil,
                          decidedAt: Date())
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
    }

    @Test func refusedNeedsEveryMatchingHostRefusedAndAtLeastOneSeen() throws {
        let hosts = HostVerdict.aggregate([
            connection(1, "api.example.com", .refused, .alert), connection(2, "cdn.example.com", .inconclusive, .idle),
            connection(3, "www.other.com", .intercepted, .applicationData),
        ])
        #expect(try Expectation(parsing: "refused:api.example.com").evaluate(hosts).met)
        #expect(!(try Expectation(parsing: "refused:*.example.com").evaluate(hosts).met))
        #expect(try Expectation(parsing: "intercepted:www.other.com").evaluate(hosts).met)
        let unseen = try Expectation(parsing: "refused:pinned.example.com").evaluate(hosts)
        #expect(!unseen.met)
        #expect(unseen.explanation.contains("unseen"))
    }

    @Test func malformedExpectationsSayWhatIsWrong() {
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "refused") }
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "pinned:a.test") }
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "refused:a.*.test") }
    }

    @Test func theReportListsUnseenExpectedHostsAndTheResult() throws {
        let report = VerdictReport(final: true, listen: "127.0.0.1:1", caCertificate: "/ca.pem", silenceWindowSeconds: 3,
                                   connections: [connection(1, "a.test", .refused, .alert)],
                                   expectations: [try Expectation(parsing: "refused:a.test"), try Expectation(parsing: "intercepted:b.test")])
        #expect(report.result == "fail")
        #expect(report.hosts.map(\.verdict) == [.refused, .unseen])
        let decoded = try VerdictReport.decode(try report.encoded())
        #expect(decoded.seenHosts.map(\.host) == ["a.test"])
        #expect(decoded.expectations.map(\.met) == [true, false])
    }

    @Test func eventLinesCarryTheCommonFields() throws {
        let line = EventLine(.verdict(connection(9, "a.test", .refused, .alert)), time: Date(timeIntervalSince1970: 0)).json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "verdict")
        #expect(object["connection"] as? Int == 9)
        #expect(object["host"] as? String == "a.test")
        #expect(object["port"] as? Int == 443)
        #expect(object["verdict"] as? String == "refused")
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
    }
}
