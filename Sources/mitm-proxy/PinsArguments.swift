import ArgumentParser
import Foundation
import MITMPins

/// Output formats of `pins check`.
enum PinsCheckFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// `--only` values.
enum PinsPositionChoice: String, ExpressibleByArgument, CaseIterable {
    case leaf, intermediate, root, ca

    var positions: [ChainPosition] {
        switch self {
        case .leaf: return [.leaf]
        case .intermediate: return [.intermediate]
        case .root: return [.root]
        case .ca: return [.intermediate, .root]
        }
    }
}

extension PinsOutputFormat: ExpressibleByArgument {}

/// Printing a `PinsToolResult` and exiting with its status.
enum PinsOutput {
    static func emit(_ result: PinsToolResult) throws {
        if !result.standardOutput.isEmpty { print(result.standardOutput, terminator: "") }
        if !result.standardError.isEmpty { FileHandle.standardError.write(Data(result.standardError.utf8)) }
        if result.exitStatus != 0 { throw ExitCode(result.exitStatus) }
    }
}
