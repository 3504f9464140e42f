import ArgumentParser
import Foundation
import MITMCore

/// `mitm-proxy verify`: checks a saved report against expectations.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a saved --report file against expectations (exit 0 when all hold, 1 when one does not, 2 on bad input).")

    @Option(name: .customLong("report"), help: ArgumentHelp("The report JSON written by --report.", valueName: "file"))
    var reportPath: String

    @Option(name: .customLong("expect"), help: ArgumentHelp("refused:HOST or intercepted:HOST; repeatable.", valueName: "outcome:host"))
    var expectations: [String] = []

    func validate() throws {
        guard !expectations.isEmpty else { throw ValidationError("give at least one --expect refused:HOST or intercepted:HOST") }
        for text in expectations {
            do { _ = try Expectation(parsing: text) } catch { throw ValidationError(error.description) }
        }
    }

    func run() throws {
        guard let data = FileManager.default.contents(atPath: reportPath) else {
            FileHandle.standardError.write(Data("mitm-proxy: cannot read report \(reportPath)\n".utf8))
            throw ExitCode(2)
        }
        let report: VerdictReport
        do {
            report = try VerdictReport.decode(data)
        } catch {
            FileHandle.standardError.write(Data("mitm-proxy: \(reportPath) is not a mitm-proxy report: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let parsed = try expectations.map { try Expectation(parsing: $0) }
        let hosts = report.seenHosts
        let results = parsed.map { $0.evaluate(hosts) }
        print(VerdictText.table(hosts, expectations: results))
        if !report.final { print("note: the report is not final (the proxy was still running when it was written)") }
        if !results.allSatisfy(\.met) { throw ExitCode(1) }
    }
}
