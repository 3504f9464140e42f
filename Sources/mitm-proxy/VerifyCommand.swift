import ArgumentParser
import Foundation
import MITMCore

/// `mitm-proxy verify`: checks a saved report against expectations.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Check a saved --report file against expectations (exit 0 when all hold, 1 when one does not, 2 on bad input).",
        discussion: "Without --expect, the expectations recorded in the report are checked again.")

    @Option(name: .customLong("report"), help: ArgumentHelp("The report JSON written by --report.", valueName: "file"))
    var reportPath: String

    @Option(
        name: .customLong("expect"),
        help: ArgumentHelp(
            "refused:HOST or intercepted:HOST; repeatable (default: the report's own expectations).",
            valueName: "outcome:host"))
    var expectations: [String] = []

    @Option(
        name: .customLong("expect-from"),
        help: ArgumentHelp(
            "The app's Info.plist or network_security_config.xml: its pinned domains become expectations (repeatable); "
                + "an --expect for the same host wins.", valueName: "file"))
    var expectFrom: [String] = []

    @Flag(
        name: .customLong("allow-unproven-refusals"),
        help: ArgumentHelp(
            "RISKY: let refused:HOST hold although the client never accepted the proxy's CA in the run."))
    var allowUnprovenRefusals = false

    func validate() throws {
        _ = try ExpectationInputs(flags: expectations, files: expectFrom)
    }

    func run() throws {
        let data: Data
        do {
            data = try FileReading.contents(of: reportPath, what: "report")
        } catch {
            fail(error.description)
        }
        if let audit = AuditResult.decodeIfAudit(data) {
            try verify(audit)
            return
        }
        let report: VerdictReport
        do {
            report = try VerdictReport.decode(data)
        } catch {
            fail("\(reportPath) is not a mitm-proxy report: \(error)")
        }
        let recorded = expectations.isEmpty && expectFrom.isEmpty
        let parsed: [Expectation]
        if recorded {
            do {
                parsed = try report.expectations.map { result throws(ExpectationError) in
                    try Expectation(recorded: result)
                }
            } catch {
                fail("\(reportPath) holds an expectation this version cannot read: \(error)")
            }
        } else {
            let inputs = try ExpectationInputs(flags: expectations, files: expectFrom)
            for line in inputs.summary { print(line) }
            for warning in inputs.warnings { FileHandle.standardError.write(Data((warning + "\n").utf8)) }
            parsed = inputs.expectations
        }
        guard !parsed.isEmpty else {
            fail(
                "\(reportPath) records no expectations: give at least one --expect refused:HOST or intercepted:HOST, or --expect-from FILE"
            )
        }
        var hosts = report.seenHosts
        let check = ExpectationCheck(
            parsed, provenClients: report.provenClients,
            allowUnprovenRefusals: allowUnprovenRefusals || (recorded && report.allowUnprovenRefusals),
            trustPerAddress: report.trustPerAddress, clientLabels: report.clientLabels)
        let results = check.evaluate(hosts)
        VerdictEvidence.attach(to: &hosts, check: check)
        print(VerdictText.table(hosts, expectations: results, client: report.clientCommand))
        if !report.final { print("note: the report is not final (the proxy was still running when it was written)") }
        if let client = report.clientCommand, !client.succeeded { throw ExitCode(ExitStatus.clientCommandFailed) }
        if !results.allSatisfy(\.met) { throw ExitCode(ExitStatus.expectationsFailed) }
    }

    /// An audit's report, judged again: its rounds against its own expectations, or against those given.
    private func verify(_ audit: AuditResult) throws {
        let expectations: [Expectation]
        if givenExpectations {
            let inputs = try ExpectationInputs(flags: self.expectations, files: expectFrom)
            for line in inputs.summary { print(line) }
            for warning in inputs.warnings { FileHandle.standardError.write(Data((warning + "\n").utf8)) }
            expectations = inputs.expectations
        } else {
            do {
                expectations = try audit.expectations.map { result throws(ExpectationError) in
                    try Expectation(recorded: result)
                }
            } catch {
                fail("\(reportPath) holds an expectation this version cannot read: \(error)")
            }
        }
        let judged = AuditResult(
            rounds: audit.rounds, expectations: expectations, allowUnprovenRefusals: allowUnprovenRefusals,
            generatedAt: audit.generatedAt)
        print("\(reportPath): an audit of \(judged.rounds.count) round\(judged.rounds.count == 1 ? "" : "s")")
        print(AuditText.matrix(judged))
        if judged.result != "pass" { throw ExitCode(ExitStatus.expectationsFailed) }
    }

    private var givenExpectations: Bool { !expectations.isEmpty || !expectFrom.isEmpty }

    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("mitm-proxy: \(message)\n".utf8))
        Foundation.exit(ExitStatus.usageOrSetup)
    }
}
