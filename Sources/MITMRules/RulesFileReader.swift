import Foundation
import MITMCore
import Yams

/// Reads a `--rules` file: YAML (JSON is YAML too), turned into rules by `RuleFile`.
package enum RulesFileReader {
    /// Rules files are small; a larger file is a mistake (a HAR or a binary passed by accident).
    package static let sizeLimit = 1024 * 1024

    /// The enabled rules of the file at `path`.
    package static func rules(at path: String) throws(RuleError) -> [TrafficRule] {
        let bytes = try contents(of: path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw RuleError("\(path): not UTF-8 text") }
        if let alias = YAMLAliasScan.firstAlias(in: text) {
            throw RuleError(
                "\(path):\(alias.line):\(alias.column): YAML aliases (*name) are not supported in rules files; "
                    + "write the value out")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw RuleError("\(path): not valid YAML or JSON: \(error)")
        }
        let tree = try root.map { node throws(RuleError) in try value(of: node, path: path) } ?? .null
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try RuleFile.rules(from: tree, fileName: path, baseDirectory: directory, ruleLines: ruleLines(root))
    }

    /// The file's bytes, reading no more than one past the size limit (a rules file named by mistake may be huge,
    /// or endless like `/dev/zero`).
    private static func contents(of path: String) throws(RuleError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw RuleError("\(path): cannot read it: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: sizeLimit + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw RuleError("\(path): cannot read it: \(String(cString: strerror(errno)))")
            }
            filled += count
        }
        guard filled <= sizeLimit else { throw RuleError("\(path): larger than 1 MiB; is it really a rules file?") }
        return Array(bytes[..<filled])
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
            throw RuleError(
                "\(path)\(Self.place(node)): YAML aliases are not supported in rules files; write the value out")
        }
    }

    /// The line each rule starts on: the items of the top-level list, or of the list under `rules:`.
    private static func ruleLines(_ root: Node?) -> [Int] {
        let list: Node.Sequence?
        switch root {
        case .sequence(let sequence)?: list = sequence
        case .mapping(let mapping)?: list = mapping.first { $0.key.string == "rules" }?.value.sequence
        default: list = nil
        }
        return list?.map { $0.mark?.line ?? 0 } ?? []
    }

    private static func place(_ node: Node) -> String {
        node.mark.map { ":\($0.line):\($0.column)" } ?? ""
    }
}
