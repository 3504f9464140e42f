import ArgumentParser
import Foundation

/// `mitm-proxy har`: look at recorded HAR files.
struct HARCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "har", abstract: "Summarize a HAR file recorded with --har.", subcommands: [Summary.self])

    struct Summary: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print hosts, request counts, statuses and TLS verdicts of a HAR file.")

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
            guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let log = root["log"] as? [String: Any], let entries = log["entries"] as? [[String: Any]] else {
                FileHandle.standardError.write(Data("mitm-proxy: \(path) is not a HAR file (no log.entries)\n".utf8))
                throw ExitCode(2)
            }
            print(HARSummary(entries: entries, tlsErrors: log["_tlsErrors"] as? [[String: Any]] ?? []).text)
        }
    }
}

/// The per-host table of a HAR file.
struct HARSummary {
    let entries: [[String: Any]]
    let tlsErrors: [[String: Any]]

    var text: String {
        var rows: [String: (requests: Int, statuses: [Int: Int], bytes: Int, verdicts: [String])] = [:]
        for entry in entries {
            let request = entry["request"] as? [String: Any] ?? [:]
            let response = entry["response"] as? [String: Any] ?? [:]
            let host = URLComponents(string: request["url"] as? String ?? "")?.host ?? "?"
            var row = rows[host] ?? (0, [:], 0, [])
            row.requests += 1
            row.statuses[response["status"] as? Int ?? 0, default: 0] += 1
            row.bytes += max(0, response["bodySize"] as? Int ?? 0)
            rows[host] = row
        }
        for error in tlsErrors {
            let host = error["host"] as? String ?? "?"
            var row = rows[host] ?? (0, [:], 0, [])
            let alert = (error["alert"] as? String).map { " \($0)" } ?? ""
            row.verdicts.append("\(error["verdict"] as? String ?? "?")/\(error["reason"] as? String ?? "?")\(alert)")
            rows[host] = row
        }
        let width = max(4, rows.keys.map(\.count).max() ?? 4)
        var lines = ["HOST".padding(toLength: width, withPad: " ", startingAt: 0) + "  REQUESTS  STATUSES            BYTES       TLS REFUSED/FAILED"]
        for host in rows.keys.sorted() {
            let row = rows[host]!
            let statuses = row.statuses.keys.sorted().map { "\($0 == 0 ? "failed" : String($0))×\(row.statuses[$0]!)" }.joined(separator: " ")
            let verdicts = Dictionary(grouping: row.verdicts, by: { $0 }).map { "\($0.key)×\($0.value.count)" }.sorted().joined(separator: ", ")
            lines.append(host.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(row.requests).padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                + statuses.padding(toLength: 18, withPad: " ", startingAt: 0) + "  "
                + String(row.bytes).padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + verdicts)
        }
        lines.append("\(entries.count) entries, \(tlsErrors.count) refused or failed TLS connections")
        return lines.joined(separator: "\n")
    }
}
