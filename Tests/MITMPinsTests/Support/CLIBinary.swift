import Foundation

/// The `mitm-proxy` executable that `swift build` / `swift test` put beside the test bundle.
enum CLIBinary {
    /// Its path, or nil when it was not built.
    static var path: String? {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("mitm-proxy").path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs `mitm-proxy arguments`.
    static func run(_ arguments: [String]) async throws -> SubprocessResult {
        guard let path else { throw TestFailure("mitm-proxy was not built next to the tests: run swift build first") }
        return try await Subprocess.run(path, arguments)
    }
}
