import MITMCore
import Testing

@Suite struct AuditConclusionTests {
    private func cells(
        trusted: AuditCell.Verdict, invalid: AuditCell.Verdict, passthrough: AuditCell.Verdict = .passedThrough
    ) -> [AuditCell] {
        [
            AuditCell(
                profile: .trusted, verdict: trusted, how: trusted == .refused ? ["closed-after-handshake"] : [],
                connections: 1)
        ]
            + CertificateProfile.plain.filter(\.isInvalid).map {
                AuditCell(profile: $0, verdict: invalid, how: [], connections: 1)
            }
            + [AuditCell(profile: .passthrough, verdict: passthrough, how: [], connections: 0)]
    }

    @Test func conclusions() {
        #expect(
            AuditConclusion.of(cells(trusted: .accepted, invalid: .refused), passthroughCommandFailed: false).kind
                == .validatesNotPinned)
        #expect(
            AuditConclusion.of(cells(trusted: .refused, invalid: .refused), passthroughCommandFailed: false).kind
                == .pinned)
        #expect(
            AuditConclusion.of(cells(trusted: .accepted, invalid: .accepted), passthroughCommandFailed: false).kind
                == .critical)
    }

    @Test func aRefusalOfEverythingWithoutAWorkingRouteOrProofProvesNothing() {
        let broken = AuditConclusion.of(cells(trusted: .refused, invalid: .refused), passthroughCommandFailed: true)
        #expect(broken.kind == .provesNothing)
        #expect(broken.explanation.contains("route may be broken"))
        let unproven = AuditConclusion.of(
            cells(trusted: .refused, invalid: .refused), passthroughCommandFailed: false, unprovenRefuser: "10.0.0.7")
        #expect(unproven.kind == .provesNothing)
        #expect(unproven.explanation.contains("is the CA installed"))
        let unseen = AuditConclusion.of(cells(trusted: .accepted, invalid: .unseen), passthroughCommandFailed: false)
        #expect(unseen.kind == .provesNothing)
        #expect(unseen.explanation.contains("expired: unseen"))
    }

    @Test func junitEscapesAndCountsFailures() {
        let report = JUnitReport(
            name: "a<b", cases: [.init(group: "h\"1", name: "x", failure: "bad & worse"), .init(group: "h", name: "y")])
        #expect(report.xml.contains("failures=\"1\""))
        #expect(report.xml.contains("classname=\"h&quot;1\""))
        #expect(report.xml.contains("message=\"bad &amp; worse\" type=\"expectation\">bad &amp; worse</failure>"))
        #expect(report.xml.contains("time=\"0.000\""))
        #expect(report.xml.contains("name=\"a&lt;b\""))
    }
}
