import Foundation
import MITMCore
import Yams

/// Reads a `--rules` file: YAML (JSON is YAML too), turned into rules by `RuleFile`.
enum RulesFileReader {
    /// Rules files are small; a larger file is a mistake (a HAR or a binary passed by accident).
    static let sizeLimit = 1024 * 1024

    /// The enabled rules of the file at `path`.
    static func rules(at path: String) throws(RuleError) -> [TrafficRule] {
        let url = URL(fileURLWithPath: path)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw RuleError("\(path): cannot read it: \((error as NSError).localizedDescription)")
        }
        guard data.count <= sizeLimit else { throw RuleError("\(path): larger than 1 MiB; is it really a rules file?") }
        guard let text = String(data: data, encoding: .utf8) else { throw RuleError("\(path): not UTF-8 text") }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw RuleError("\(path): not valid YAML or JSON: \(error)")
        }
        let tree = try root.map { node throws(RuleError) in try value(of: node, path: path) } ?? .null
        return try RuleFile.rules(from: tree, fileName: path, baseDirectory: url.deletingLastPathComponent().path)
    }

    private static func value(of node: Node, path: String) throws(RuleError) -> RuleFileValue {
        switch node {
        case .scalar(let scalar):
            return node.null != nil ? .null : .scalar(scalar.string)
        case .sequence(let sequence):
            var items: [RuleFileValue] = []
            for item in sequence { items.append(try value(of: item, path: path)) }
            return .list(items)
        case .mapping(let mapping):
            var entries: [(key: String, value: RuleFileValue)] = []
            for (key, item) in mapping {
                guard case .scalar(let name) = key else {
                    throw RuleError("\(path)\(Self.place(key)): a key must be a plain name")
                }
                entries.append((name.string, try value(of: item, path: path)))
            }
            return .map(entries)
        case .alias:
            throw RuleError("\(path)\(Self.place(node)): YAML aliases are not supported in rules files; write the value out")
        }
    }

    private static func place(_ node: Node) -> String {
        node.mark.map { ":\($0.line):\($0.column)" } ?? ""
    }
}
