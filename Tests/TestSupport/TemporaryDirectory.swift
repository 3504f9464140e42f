import Foundation

/// Fresh directories under the system temporary directory: an instance owns one and removes it when released; the
/// static functions hand out unique paths for a test that removes what it made itself.
public final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked Sendable: `path` never changes.
    /// The directory, created by `init`.
    public let path: String

    /// Creates a new, empty directory named after `label`.
    public init(_ label: String = "test") throws {
        path = try Self.make(label)
    }

    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `contents` to `path/name` and returns the full path.
    @discardableResult
    public func write(_ name: String, _ contents: String) throws -> String {
        try write(name, Data(contents.utf8))
    }

    /// Writes `data` to `path/name` and returns the full path.
    @discardableResult
    public func write(_ name: String, _ data: Data) throws -> String {
        let target = file(name)
        try data.write(to: URL(fileURLWithPath: target))
        return target
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path that does not exist yet (not created).
    public static func path(_ label: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mitm-proxy-\(label)-\(UUID().uuidString)").path
    }

    /// A new, empty directory; the caller removes it.
    public static func make(_ label: String) throws -> String {
        let directory = path(label)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }
}
