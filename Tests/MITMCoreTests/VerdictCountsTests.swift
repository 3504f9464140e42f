import Foundation
import MITMCore
import Testing

/// Per-host counts typed by kind and way, written to reports as they were when they were string-keyed tables.
@Suite struct VerdictCountsTests {
    private func connection(_ id: Int, _ kind: VerdictKind, _ reason: VerdictReason, alert: String? = nil)
        -> ConnectionVerdict
    {
        ConnectionVerdict(
            connectionID: id, host: "a.test", port: 443, verdict: Verdict(kind: kind, reason: reason, alert: alert),
            tlsVersion: nil,
            alpn: nil, offeredALPN: [], shownCertificatePin: "pin", startedAt: Date(), handshakeMilliseconds: nil,
            decidedAt: Date(), client: "127.0.0.1")
    }

    private var host: HostVerdict {
        HostVerdict.aggregate([
            connection(1, .refused, .alert, alert: "unknown_ca"), connection(2, .refused, .closedAfterHandshake),
            connection(3, .refused, .closedAfterHandshake),
            connection(4, .failed, .negotiation, alert: "handshake_failure"),
        ])[0]
    }

    @Test func countsAreReadByKindAndWay() {
        let counts = host.counts
        #expect(counts[.refused] == 3)
        #expect(counts[.failed] == 1)
        #expect(counts[.intercepted] == 0)
        #expect(counts.total == 4)
        #expect(counts.kinds == [.refused, .failed])
        #expect(counts[.refused, VerdictWay(reason: .alert, alert: "unknown_ca")] == 1)
        #expect(
            counts.ways(of: .refused).map { "\($0.way) \($0.count)" } == [
                "closed-after-handshake 2", "alert unknown_ca 1",
            ])
    }

    @Test func waysReadBackFromTheirWords() {
        for way in [
            VerdictWay(reason: .closedAfterHandshake), VerdictWay(reason: .alert, alert: "unknown_ca"),
            VerdictWay(reason: .negotiation, alert: "handshake_failure"),
        ] {
            #expect(VerdictWay(text: way.description) == way)
        }
        #expect(VerdictWay(text: "no such way") == nil)
    }

    @Test func reportsKeepTheirTablesAndReadBack() throws {
        let host = host
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(host)) as? [String: Any]
        #expect(json?["counts"] as? [String: Int] == ["refused": 3, "failed": 1])
        #expect(
            json?["ways"] as? [String: [String: Int]]
                == [
                    "refused": ["alert unknown_ca": 1, "closed-after-handshake": 2],
                    "failed": ["negotiation (alert handshake_failure)": 1],
                ])
        let client = try JSONSerialization.jsonObject(with: JSONEncoder().encode(host.byClient[0])) as? [String: Any]
        #expect(
            client?["ways"] as? [String: Int]
                == [
                    "refused:alert unknown_ca": 1, "refused:closed-after-handshake": 2,
                    "failed:negotiation (alert handshake_failure)": 1,
                ])
        #expect(try JSONDecoder().decode(HostVerdict.self, from: JSONEncoder().encode(host)) == host)
    }

    @Test func anUnknownWayInAReportIsAnError() {
        let text =
            #"{"host": "a.test", "verdict": "refused", "attempts": 1, "counts": {"refused": 1}, "ways": {"refused": {"teleported": 1}}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(HostVerdict.self, from: Data(text.utf8)) }
    }
}
