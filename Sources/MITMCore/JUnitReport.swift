import Foundation

/// JUnit XML, the format GitLab, Jenkins and GitHub test views read: one `<testsuite>` of test cases.
package struct JUnitReport: Sendable, Equatable {
    /// One test case.
    package struct TestCase: Sendable, Equatable {
        /// The group (`classname`): a host, or `expectations`.
        package var group: String
        /// The case's name.
        package var name: String
        /// Why it failed; nil when it passed.
        package var failure: String?
        /// What happened, in full, as the failure's body: what was expected, what was seen, the verdict evidence.
        package var failureDetail: String?
        /// Why it was skipped (it proves nothing); nil when it ran.
        package var skipped: String?
        /// How long it took, in seconds.
        package var seconds: Double

        /// A case.
        package init(
            group: String, name: String, failure: String? = nil, failureDetail: String? = nil, skipped: String? = nil,
            seconds: Double = 0
        ) {
            self.group = group
            self.name = name
            self.failure = failure
            self.failureDetail = failureDetail
            self.skipped = skipped
            self.seconds = seconds
        }
    }

    /// The suite's name.
    package var name: String
    /// The cases.
    package var cases: [TestCase]
    /// How long the whole run took, in seconds.
    package var seconds: Double
    /// The run's summary, as printed at its end (`<system-out>`).
    package var systemOut: String

    /// A suite of `cases`.
    package init(name: String, cases: [TestCase], seconds: Double = 0, systemOut: String = "") {
        self.name = name
        self.cases = cases
        self.seconds = seconds
        self.systemOut = systemOut
    }

    /// One case per expectation of a run that took `seconds` (from `startedAt`) and ended with `report`.
    package init(run report: VerdictReport, startedAt: Date, summary: String) {
        var cases = report.expectations.map { result in
            // An expectation is judged by its hosts' verdicts: its time is the run's until the last of them was decided.
            let decided = report.connections.filter { result.hosts[$0.host] != nil }.map(\.decidedAt).max()
            return TestCase(
                group: "expectations", name: "expect \(result.expectation)",
                failure: result.met ? nil : result.explanation,
                failureDetail: result.met ? nil : Self.detail(result, hosts: report.hosts),
                seconds: decided.map { max(0, $0.timeIntervalSince(startedAt)) } ?? 0)
        }
        if let client = report.clientCommand {
            cases.append(
                TestCase(
                    group: "client", name: "client command", failure: client.succeeded ? nil : client.status,
                    failureDetail: client.succeeded ? nil : "command: \(client.command)\n\(client.status)",
                    seconds: client.seconds ?? 0))
        }
        self.init(
            name: "mitm-proxy", cases: cases, seconds: max(0, report.generatedAt.timeIntervalSince(startedAt)),
            systemOut: summary)
    }

    /// One case per host and profile of an audit that took `seconds`, and one per expectation.
    package init(audit: AuditResult, seconds: Double, summary: String) {
        var cases: [TestCase] = []
        for row in audit.rows {
            for cell in row.cells {
                let name = "\(cell.profile)"
                let what =
                    cell.how.isEmpty
                    ? cell.verdict.rawValue : "\(cell.verdict.rawValue) (\(cell.how.joined(separator: ", ")))"
                // A cell is judged by its profile's round: the time its client command ran.
                let round = audit.rounds.first { $0.profile == cell.profile }
                let roundSeconds = round?.clientCommand?.seconds ?? 0
                if cell.isCritical {
                    let evidence = round?.hosts.first { $0.host == row.host }?.evidence
                    cases.append(
                        TestCase(
                            group: row.host, name: name, failure: VerdictText.acceptedInvalid(cell.profile),
                            failureDetail:
                                "expected: refused (the \(cell.profile) certificate is invalid)\nseen: \(what)"
                                + (evidence.map { "\nevidence: \($0)" } ?? ""),
                            seconds: roundSeconds))
                } else if cell.verdict == .unseen || cell.verdict == .inconclusive {
                    cases.append(
                        TestCase(group: row.host, name: name, skipped: "\(what): proves nothing", seconds: roundSeconds)
                    )
                } else {
                    cases.append(TestCase(group: row.host, name: name, seconds: roundSeconds))
                }
            }
        }
        cases += audit.expectations.map { result in
            TestCase(
                group: "expectations", name: "expect \(result.expectation)",
                failure: result.met ? nil : result.explanation,
                failureDetail: result.met ? nil : Self.detail(result, hosts: []))
        }
        self.init(name: "mitm-proxy audit", cases: cases, seconds: seconds, systemOut: summary)
    }

    /// A failed expectation's body: what was expected, what each host got, and the evidence for its verdict.
    static func detail(_ result: ExpectationResult, hosts: [HostVerdict]) -> String {
        var lines = ["expected: \(result.expectation)"]
        if result.hosts.isEmpty {
            lines.append("seen: no matching host")
        } else {
            for (host, verdict) in result.hosts.sorted(by: { $0.key < $1.key }) {
                lines.append("seen: \(host) \(verdict)")
                if let evidence = hosts.first(where: { $0.host == host })?.evidence {
                    lines.append("evidence: \(evidence)")
                }
            }
        }
        lines.append(result.explanation)
        return lines.joined(separator: "\n")
    }

    /// The XML document.
    package var xml: String {
        let failures = cases.filter { $0.failure != nil }.count
        let skipped = cases.filter { $0.skipped != nil }.count
        let time = Self.secondsText(seconds)
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<testsuites name=\"\(XMLText.escaped(name))\" tests=\"\(cases.count)\" failures=\"\(failures)\" time=\"\(time)\">",
            "  <testsuite name=\"\(XMLText.escaped(name))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" "
                + "skipped=\"\(skipped)\" time=\"\(time)\">",
        ]
        for testCase in cases {
            let open =
                "    <testcase classname=\"\(XMLText.escaped(testCase.group))\" name=\"\(XMLText.escaped(testCase.name))\" "
                + "time=\"\(Self.secondsText(testCase.seconds))\""
            if let failure = testCase.failure {
                lines += [
                    open + ">",
                    "      <failure message=\"\(XMLText.escaped(failure))\" type=\"expectation\">"
                        + XMLText.escaped(testCase.failureDetail ?? failure) + "</failure>", "    </testcase>",
                ]
            } else if let skipped = testCase.skipped {
                lines += [open + ">", "      <skipped message=\"\(XMLText.escaped(skipped))\"/>", "    </testcase>"]
            } else {
                lines.append(open + "/>")
            }
        }
        if !systemOut.isEmpty { lines.append("    <system-out>\(XMLText.escaped(systemOut))</system-out>") }
        lines += ["  </testsuite>", "</testsuites>", ""]
        return lines.joined(separator: "\n")
    }

    /// Seconds with millisecond precision, as JUnit readers expect (`1.234`).
    static func secondsText(_ seconds: Double) -> String {
        let milliseconds = Int((max(0, seconds) * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
