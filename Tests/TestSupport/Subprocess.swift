import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a subprocess ended and what it printed.
public struct SubprocessResult: Sendable, CustomStringConvertible {
    /// The exit code, or the signal number when `terminatedBySignal`.
    public var status: Int32
    /// The process was ended by a signal (including the kill after a timeout).
    public var terminatedBySignal: Bool
    /// The timeout expired and the process was killed.
    public var timedOut: Bool
    /// Everything written to stdout.
    public var stdout: [UInt8]
    /// Everything written to stderr.
    public var stderr: [UInt8]

    /// stdout decoded as UTF-8.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// stderr decoded as UTF-8.
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    /// Exited by itself with status 0.
    public var succeeded: Bool { !timedOut && !terminatedBySignal && status == 0 }

    /// How it ended, with the start of each output as text, for test failure messages.
    public var description: String {
        let ending =
            timedOut ? "timed out" : terminatedBySignal ? "killed by signal \(status)" : "exit status \(status)"
        return "\(ending); stdout (\(stdout.count) bytes): \(stdoutText.prefix(500).debugDescription); "
            + "stderr: \(stderrText.prefix(2000).debugDescription)"
    }
}

/// A failure to start or find a subprocess.
public struct SubprocessError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    public init(description: String) { self.description = description }
}

/// Runs commands for tests: captured output, optional stdin, and a timeout that kills, so a test never hangs.
public enum Subprocess {
    private static let ignoreBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Runs `executable` (a path, or a name looked up in PATH) on a thread of its own.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        stdin: [UInt8]? = nil,
        environment: [String: String]? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> SubprocessResult {
        try await DedicatedThread.run {
            try runBlocking(executable, arguments, stdin: stdin, environment: environment, timeout: timeout)
        }
    }

    /// Runs `executable` on the calling thread; stdin is /dev/null when `stdin` is nil. A test awaits `run` instead:
    /// this blocks a thread of the test pool for as long as the child runs. For synchronous places only (a `defer`,
    /// a suite's `.enabled(if:)` condition).
    public static func runBlocking(
        _ executable: String,
        _ arguments: [String] = [],
        stdin: [UInt8]? = nil,
        environment: [String: String]? = nil,
        timeout: Duration = .seconds(30)
    ) throws -> SubprocessResult {
        _ = ignoreBrokenPipes
        var child = try SpawnedChild(
            path: try executablePath(executable), arguments: arguments, environment: environment,
            pipeStdin: stdin != nil)
        var pump = PipePump(input: stdin ?? [], stdin: child.stdin, stdout: child.stdout, stderr: child.stderr)
        let deadline = DispatchTime.now() + dispatchInterval(timeout)
        var timedOut = !pump.run(until: deadline) { child.hasExited() }
        if !timedOut {
            // Both outputs ended (the child closed them): the exit follows.
            while !child.hasExited() {
                guard DispatchTime.now() < deadline else {
                    timedOut = true
                    break
                }
                usleep(1_000)
            }
        }
        if timedOut {
            child.kill()
            _ = pump.run(until: .now() + .seconds(1)) { true }
        }
        pump.closeAll()
        return SubprocessResult(
            status: child.status, terminatedBySignal: child.terminatedBySignal, timedOut: timedOut,
            stdout: pump.stdout, stderr: pump.stderr)
    }

    /// `name` itself if it contains a slash, else the first executable of that name in PATH.
    public static func executablePath(_ name: String) throws -> String {
        if name.contains("/") { return name }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw SubprocessError(description: "\(name) is not installed or not in PATH")
    }

    public static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
