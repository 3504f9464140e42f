import ArgumentParser
import Foundation

/// `mitm-proxy har`: look at recorded HAR files.
struct HARCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har", abstract: "Summarize a HAR file recorded with --har.", subcommands: [Summary.self])

    struct Summary: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print hosts, request counts, statuses and TLS verdicts of a HAR file.")

        @Argument(help: ArgumentHelp("The HAR file.", valueName: "file"))
        var path: String

        func run() throws {
            let data: Data
            do {
                data = try FileReading.contents(of: path, what: "HAR file")
            } catch {
                FileHandle.standardError.write(Data("mitm-proxy: \(error)\n".utf8))
                throw ExitCode(2)
            }
            guard let summary = HARSummary(harFile: data) else {
                FileHandle.standardError.write(Data("mitm-proxy: \(path) is not a HAR file (no log.entries)\n".utf8))
                throw ExitCode(2)
            }
            print(summary.text)
        }
    }
}
