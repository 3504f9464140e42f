import Foundation

/// Runs python3 client scripts that can `import proxyclient` (Fixtures/proxyclient.py).
enum PythonClient {
    /// Runs `script` with `arguments` as sys.argv[1...].
    static func run(
        _ script: String,
        _ arguments: [String] = [],
        timeout: Duration = .seconds(40)
    ) async throws -> SubprocessResult {
        try await Subprocess.run("python3", ["-c", script] + arguments, environment: environment, timeout: timeout)
    }

    /// Runs the fixture `name` (a file in Fixtures) with `arguments`.
    static func run(fixture name: String, _ arguments: [String] = [], timeout: Duration = .seconds(40)) async throws
        -> SubprocessResult
    {
        try await Subprocess.run(
            "python3", [RepositoryLayout.fixtures + "/" + name] + arguments, environment: environment, timeout: timeout)
    }

    private static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = RepositoryLayout.fixtures
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        return environment
    }
}
