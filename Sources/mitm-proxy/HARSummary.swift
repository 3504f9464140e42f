import Foundation

/// The per-host table `har summary` prints.
struct HARSummary {
    let entries: [[String: Any]]
    let tlsErrors: [[String: Any]]

    /// The summary of a HAR file's bytes; nil when they are not JSON with `log.entries`.
    init?(harFile data: Data) {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let log = root["log"] as? [String: Any], let entries = log["entries"] as? [[String: Any]]
        else { return nil }
        self.entries = entries
        self.tlsErrors = log["_tlsErrors"] as? [[String: Any]] ?? []
    }

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
        var lines = [
            "HOST".padding(toLength: width, withPad: " ", startingAt: 0)
                + "  REQUESTS  STATUSES            BYTES       TLS REFUSED/FAILED"
        ]
        for host in rows.keys.sorted() {
            let row = rows[host]!
            let statuses = row.statuses.keys.sorted().map { "\($0 == 0 ? "failed" : String($0))×\(row.statuses[$0]!)" }
                .joined(separator: " ")
            let verdicts = Dictionary(grouping: row.verdicts, by: { $0 }).map { "\($0.key)×\($0.value.count)" }.sorted()
                .joined(separator: ", ")
            lines.append(
                host.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + String(row.requests).padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                    + statuses.padding(toLength: 18, withPad: " ", startingAt: 0) + "  "
                    + String(row.bytes).padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + verdicts)
        }
        lines.append("\(entries.count) entries, \(tlsErrors.count) refused or failed TLS connections")
        return lines.joined(separator: "\n")
    }
}
