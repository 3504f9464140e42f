import Foundation
import Testing

@testable import MITMCore

@Suite struct ExpectationMergeTests {
    private let plist = ExpectationSource(file: "Info.plist", domain: "example.org")

    private func host(_ name: String, _ verdict: HostVerdictKind) -> HostVerdict {
        HostVerdict(
            host: name, port: 443, verdict: verdict, attempts: 1,
            counts: VerdictKind(rawValue: verdict.rawValue).map { [$0: 1] } ?? [:], how: [],
            refusedBy: verdict == .refused ? ["127.0.0.1"] : [])
    }

    @Test func aFlagForTheSamePatternReplacesTheFileAndSaysSo() throws {
        let flag = try Expectation(parsing: "intercepted:api.example.org")
        let fromFile = Expectation(.refused, try HostPattern("api.example.org"), source: plist)
        let merge = ExpectationMerge(flags: [flag], fromFiles: [fromFile, fromFile])
        #expect(merge.expectations == [flag])
        #expect(
            merge.overrides.map(\.description) == [
                "--expect intercepted:api.example.org overrides refused:api.example.org from Info.plist (domain example.org): the flag wins",
                "--expect intercepted:api.example.org overrides refused:api.example.org from Info.plist (domain example.org): the flag wins",
            ])
    }

    @Test func betweenEquallySpecificPatternsTheFlagDecides() throws {
        let oneLevel = try #require(HostPattern.oneLevel(below: try HostPattern("example.org")))
        let fromFile = Expectation(.refused, oneLevel, source: plist)
        let flag = try Expectation(parsing: "intercepted:*.example.org")
        let merge = ExpectationMerge(flags: [flag], fromFiles: [fromFile])
        let results = ExpectationCheck(merge.expectations, provenClients: ["127.0.0.1"])
            .evaluate([host("www.example.org", .intercepted), host("a.b.example.org", .intercepted)])
        #expect(results.map(\.met) == [true, false])
        #expect(results[1].explanation.contains("covered by a more specific expectation"))
        #expect(results[1].source == plist)
    }

    @Test func aRecordedOneLevelPatternReadsBack() throws {
        let oneLevel = try #require(HostPattern.oneLevel(below: try HostPattern("example.org")))
        let expectation = Expectation(.refused, oneLevel, source: plist)
        let result = ExpectationResult(
            expectation: expectation.description, met: true, hosts: [:], explanation: "", source: plist)
        let decoded = try JSONDecoder().decode(ExpectationResult.self, from: try JSONEncoder().encode(result))
        #expect(try Expectation(recorded: decoded) == expectation)
        #expect(throws: ExpectationError.self) { try Expectation(parsing: "refused:*.example.org (one level)") }
    }

    @Test func anExpiredPinSetSaysWhyInTheResult() throws {
        let source = ExpectationSource(file: "nsc.xml", domain: "old.test", note: "pin-set expired on 2020-01-01")
        let results = ExpectationCheck(
            [Expectation(.intercepted, try HostPattern("old.test"), source: source)], provenClients: []
        )
        .evaluate([host("old.test", .intercepted)])
        #expect(results[0].met)
        #expect(results[0].explanation == "old.test: intercepted (pin-set expired on 2020-01-01)")
    }
}
