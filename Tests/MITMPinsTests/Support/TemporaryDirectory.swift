import Foundation

/// A fresh directory under the system temporary directory, removed when released.
final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked Sendable: `path` never changes; the directory is only read after creation.
    let path: String

    init() throws {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("mitm-pins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// `path/name`.
    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes `contents` to `path/name` and returns the full path.
    @discardableResult
    func write(_ name: String, _ contents: String) throws -> String {
        try write(name, Data(contents.utf8))
    }

    /// Writes `data` to `path/name` and returns the full path.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        let target = file(name)
        try data.write(to: URL(fileURLWithPath: target))
        return target
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
