import Foundation

/// One value of a property list, as `PropertyList.read` gives it.
enum PropertyList: Equatable {
    case dictionary([String: PropertyList])
    case array([PropertyList])
    case string(String)
    case boolean(Bool)
    case integer(Int128)
    case real(Double)
    case date(Date)
    case data([UInt8])

    /// Larger inputs are refused (and files are read no further): an Info.plist is a few kilobytes.
    static let maximumBytes = 8 * 1024 * 1024
    /// The deepest nesting of arrays and dictionaries accepted; an Info.plist is a few levels deep.
    static let maximumDepth = 64

    /// The property list in `bytes` (XML, or binary `bplist00`), read by readers of our own:
    /// swift-corelibs-foundation's `PropertyListSerialization` crashed on binary plists the fuzz target made.
    /// Every malformed input is an error that names `path` and the problem.
    static func read(_ bytes: [UInt8], path: String) throws(PinsError) -> PropertyList {
        guard bytes.count <= maximumBytes else {
            throw PinsError("\(path) is larger than \(maximumBytes / 1024 / 1024) MiB, which no Info.plist is")
        }
        do throws(PropertyListError) {
            if bytes.starts(with: Array("bplist".utf8)) {
                var reader = try BinaryPropertyListReader(bytes)
                return try reader.root()
            }
        } catch {
            throw PinsError("\(path) is not a usable property list: \(error.problem)")
        }
        let document: XMLTree.Element
        do {
            document = try XMLTree.parse(bytes)
        } catch {
            throw PinsError("\(path) is not a readable property list: it \(error.reason)")
        }
        do throws(PropertyListError) {
            return try XMLPropertyListReader.value(of: document)
        } catch {
            throw PinsError("\(path) is not a usable property list: \(error.problem)")
        }
    }

    /// The kind of value, for messages (`an array`).
    var kindName: String {
        switch self {
        case .dictionary: "a dictionary"
        case .array: "an array"
        case .string: "a string"
        case .boolean: "a boolean"
        case .integer: "an integer"
        case .real: "a real number"
        case .date: "a date"
        case .data: "data"
        }
    }
}

/// Why a property list cannot be read, in words.
struct PropertyListError: Error {
    let problem: String

    init(_ problem: String) {
        self.problem = problem
    }
}
