import Foundation

/// Fresh paths under the system temporary directory, unique per call.
enum TemporaryDirectory {
    /// A path that does not exist yet (not created).
    static func path(_ label: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("mitm-proxy-\(label)-\(UUID().uuidString)").path
    }

    /// A new, empty directory; the caller removes it.
    static func make(_ label: String) throws -> String {
        let directory = path(label)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }
}
