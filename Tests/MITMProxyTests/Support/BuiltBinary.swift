import Foundation

/// The `mitm-proxy` executable that `swift build --build-tests` produced next to the test bundle.
enum BuiltBinary {
    /// Its path, or an error saying how to build it.
    static func path() throws -> String {
        let build = RepositoryLayout.root + "/.build"
        // The one beside the running tests first: a sanitized test build runs its sanitized binary.
        var candidates = [RepositoryLayout.builtExecutable, build + "/debug/mitm-proxy"]
        if let triples = try? FileManager.default.contentsOfDirectory(atPath: build) {
            candidates += triples.sorted().map { "\(build)/\($0)/debug/mitm-proxy" }
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw SubprocessError(
                description: "no built mitm-proxy under \(build): run `swift build --build-tests` first")
        }
        return found
    }
}
