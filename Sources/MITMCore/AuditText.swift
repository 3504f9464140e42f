/// The audit in words: the host × profile matrix, a conclusion per host, findings and expectations.
package enum AuditText {
    /// The whole printout.
    package static func matrix(_ audit: AuditResult) -> String {
        let width = max(4, audit.rows.map(\.host.count).max() ?? 4)
        let columns = audit.profiles.indices.map { index in
            max(audit.profiles[index].description.count, audit.rows.map { $0.cells[index].text.count }.max() ?? 0)
        }
        func pad(_ text: String, _ length: Int) -> String {
            text.padding(toLength: length, withPad: " ", startingAt: 0)
        }
        var lines = [
            ([pad("HOST", width)] + zip(audit.profiles, columns).map { pad($0.description, $1) }).joined(
                separator: "  ")
        ]
        for row in audit.rows {
            lines.append(
                ([pad(row.host, width)] + zip(row.cells, columns).map { pad($0.text, $1) }).joined(separator: "  "))
        }
        if audit.rows.isEmpty { lines.append("(the client contacted no host through the proxy in any round)") }
        lines.append("")
        for row in audit.rows {
            let word = row.conclusion.kind.rawValue.uppercased()
            let explanation =
                row.conclusion.explanation.hasPrefix(word + ": ")
                ? String(row.conclusion.explanation.dropFirst(word.count + 2))
                : row.conclusion.explanation
            lines.append("\(row.host): \(word) -- \(explanation)")
        }
        for round in audit.rounds {
            if let client = round.clientCommand, !client.succeeded {
                lines.append("note: round \(round.profile): \(client.status)")
            }
        }
        for result in audit.expectations {
            lines.append("\(result.met ? "PASS" : "FAIL")  expect \(result.expectation): \(result.explanation)")
        }
        if !audit.findings.isEmpty {
            lines.append("FAIL  \(audit.findings.count) critical finding(s): the client accepted invalid certificates")
        }
        return lines.joined(separator: "\n")
    }
}
