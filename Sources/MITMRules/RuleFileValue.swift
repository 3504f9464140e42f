import MITMCore

/// A rules file as a plain tree, whatever its syntax (YAML or JSON): scalars stay text and are read by
/// the rule that expects a number, a duration or a path.
package indirect enum RuleFileValue: Sendable {
    case scalar(String)
    case list([RuleFileValue])
    /// Keys in the file's order.
    case map([(key: String, value: RuleFileValue)])
    case null

    /// How the value is written, for error messages.
    var kindName: String {
        switch self {
        case .scalar(let text): "\"\(text)\""
        case .list: "a list"
        case .map: "a mapping"
        case .null: "nothing"
        }
    }
}
