import Foundation
import Testing

@testable import MITMCore

/// Issue 34, item 9: a configuration's domain with its subdomains is one set of hosts.
@Suite struct ExpectationSetTests {
    private func connection(_ id: Int, _ host: String, _ kind: VerdictKind, _ reason: VerdictReason)
        -> ConnectionVerdict
    {
        ConnectionVerdict(
            connectionID: id, host: host, port: 443, verdict: Verdict(kind: kind, reason: reason), tlsVersion: nil,
            alpn: nil, offeredALPN: [], shownCertificatePin: "pin", startedAt: Date(), handshakeMilliseconds: nil,
            decidedAt: Date(), client: "127.0.0.1")
    }

    /// `NSPinnedDomains: qa.test` with `NSIncludesSubdomains`, as `--expect-from` reads it.
    private func fromPlist(_ extra: [MITMCore.Expectation] = []) throws -> [MITMCore.Expectation] {
        let source = ExpectationSource(file: "Info.plist", domain: "qa.test")
        return [
            MITMCore.Expectation(.refused, try HostPattern("qa.test"), source: source),
            MITMCore.Expectation(.refused, try HostPattern("*.qa.test"), source: source),
        ] + extra
    }

    private func evaluate(_ expectations: [MITMCore.Expectation], _ connections: [ConnectionVerdict])
        -> [ExpectationResult]
    {
        var ledger = VerdictLedger(detailLimit: 10)
        for connection in connections { ledger.record(connection, replacing: nil) }
        return ExpectationCheck(expectations, provenClients: ledger.provenClients).evaluate(ledger.hostVerdicts)
    }

    @Test func anAppThatTalksToASubdomainOnlySatisfiesTheApexToo() throws {
        let results = evaluate(
            try fromPlist(),
            [
                connection(1, "control.test", .intercepted, .applicationData),
                connection(2, "api.qa.test", .refused, .closedAfterHandshake),
            ])
        #expect(results.map(\.met) == [true, true], "\(results)")
        #expect(
            results[0].explanation.contains(
                "for the set of domain qa.test and its subdomains: api.qa.test stood for it"), "\(results[0])")
    }

    @Test func theSetFailsWhenAnyOfItsHostsWasIntercepted() throws {
        let results = evaluate(try fromPlist(), [connection(1, "api.qa.test", .intercepted, .applicationData)])
        #expect(results.map(\.met) == [false, false])
        #expect(results[0].explanation.contains("api.qa.test was intercepted, not refused"), "\(results[0])")
    }

    @Test func theSetIsUnseenOnlyWhenNoneOfItsHostsWas() throws {
        let results = evaluate(try fromPlist(), [connection(1, "control.test", .intercepted, .applicationData)])
        #expect(results.map(\.met) == [false, false])
        #expect(results.allSatisfy { $0.explanation.contains("unseen") })
    }

    /// Flags stay one expectation each: `--expect refused:qa.test` means that host.
    @Test func flagsAreNotSets() throws {
        let flags = [
            MITMCore.Expectation(.refused, try HostPattern("qa.test")),
            MITMCore.Expectation(.refused, try HostPattern("*.qa.test")),
        ]
        let results = evaluate(
            flags,
            [
                connection(1, "control.test", .intercepted, .applicationData),
                connection(2, "api.qa.test", .refused, .closedAfterHandshake),
            ])
        #expect(results.map(\.met) == [false, true])
    }
}

/// Issue 34, item 13: a typo in an expected host says which seen host it is closest to.
@Suite struct ExpectationTypoTests {
    @Test func anUnseenHostNamesTheSeenHostItIsClosestTo() throws {
        var ledger = VerdictLedger(detailLimit: 10)
        ledger.record(
            ConnectionVerdict(
                connectionID: 1, host: "api.example.com", port: 443, verdict: Verdict(kind: .refused, reason: .alert),
                tlsVersion: nil, alpn: nil, offeredALPN: [], shownCertificatePin: "", startedAt: Date(),
                handshakeMilliseconds: nil, decidedAt: Date(), client: "127.0.0.1"), replacing: nil)
        let expectations = try ["refused:api.exmaple.com", "refused:www.other.test"].map {
            try MITMCore.Expectation(parsing: $0)
        }
        let results = ExpectationCheck(expectations, provenClients: []).evaluate(ledger.hostVerdicts)
        #expect(results[0].explanation.hasSuffix("; did you mean api.example.com? (seen in this run)"), "\(results[0])")
        #expect(!results[1].explanation.contains("did you mean"), "\(results[1])")
        #expect(HostNameDistance.edits(Array("kitten".utf8), Array("sitting".utf8), limit: 5) == 3)
    }
}
