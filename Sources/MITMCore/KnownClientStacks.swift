/// The TLS stacks whose fingerprints the proxy knows, read from a table kept as data (one line per fingerprint:
/// the stable fingerprint, white space, the stack's name; `#` starts a comment). A match is a guess: any program
/// built on that stack with those settings sends the same ClientHello.
package struct KnownClientStacks: Sendable {
    private let names: [String: String]

    /// Reads `table`; malformed lines are skipped (the table ships with the proxy).
    package init(table: String) {
        var names: [String: String] = [:]
        for line in table.split(whereSeparator: \.isNewline) {
            let text = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = text.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 2 else { continue }
            let name = fields[1].drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
            if !name.isEmpty { names[String(fields[0])] = String(name) }
        }
        self.names = names
    }

    /// The stack a fingerprint is known to belong to.
    package func stack(for fingerprint: ClientFingerprint) -> String? { names[fingerprint.stable] }

    /// How many fingerprints the table holds.
    package var count: Int { names.count }
}
