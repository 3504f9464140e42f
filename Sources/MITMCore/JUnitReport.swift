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
        /// Why it was skipped (it proves nothing); nil when it ran.
        package var skipped: String?

        /// A case.
        package init(group: String, name: String, failure: String? = nil, skipped: String? = nil) {
            self.group = group
            self.name = name
            self.failure = failure
            self.skipped = skipped
        }
    }

    /// The suite's name.
    package var name: String
    /// The cases.
    package var cases: [TestCase]

    /// A suite of `cases`.
    package init(name: String, cases: [TestCase]) {
        self.name = name
        self.cases = cases
    }

    /// One case per expectation of a run.
    package init(run expectations: [ExpectationResult], client: ClientCommandOutcome?) {
        var cases = expectations.map { result in
            TestCase(group: "expectations", name: "expect \(result.expectation)", failure: result.met ? nil : result.explanation)
        }
        if let client { cases.append(TestCase(group: "client", name: "client command", failure: client.succeeded ? nil : client.status)) }
        self.init(name: "mitm-proxy", cases: cases)
    }

    /// One case per host and profile of an audit, and one per expectation.
    package init(audit: AuditResult) {
        var cases: [TestCase] = []
        for row in audit.rows {
            for cell in row.cells {
                let name = "\(cell.profile)"
                let what = cell.how.isEmpty ? cell.verdict.rawValue : "\(cell.verdict.rawValue) (\(cell.how.joined(separator: ", ")))"
                if cell.isCritical {
                    cases.append(TestCase(group: row.host, name: name, failure: VerdictText.acceptedInvalid(cell.profile)))
                } else if cell.verdict == .unseen || cell.verdict == .inconclusive {
                    cases.append(TestCase(group: row.host, name: name, skipped: "\(what): proves nothing"))
                } else {
                    cases.append(TestCase(group: row.host, name: name))
                }
            }
        }
        cases += audit.expectations.map { result in
            TestCase(group: "expectations", name: "expect \(result.expectation)", failure: result.met ? nil : result.explanation)
        }
        self.init(name: "mitm-proxy audit", cases: cases)
    }

    /// The XML document.
    package var xml: String {
        let failures = cases.filter { $0.failure != nil }.count
        let skipped = cases.filter { $0.skipped != nil }.count
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                     "<testsuites name=\"\(XMLText.escaped(name))\" tests=\"\(cases.count)\" failures=\"\(failures)\">",
                     "  <testsuite name=\"\(XMLText.escaped(name))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\">"]
        for testCase in cases {
            let open = "    <testcase classname=\"\(XMLText.escaped(testCase.group))\" name=\"\(XMLText.escaped(testCase.name))\""
            if let failure = testCase.failure {
                lines += [open + ">", "      <failure message=\"\(XMLText.escaped(failure))\"/>", "    </testcase>"]
            } else if let skipped = testCase.skipped {
                lines += [open + ">", "      <skipped message=\"\(XMLText.escaped(skipped))\"/>", "    </testcase>"]
            } else {
                lines.append(open + "/>")
            }
        }
        lines += ["  </testsuite>", "</testsuites>", ""]
        return lines.joined(separator: "\n")
    }
}
