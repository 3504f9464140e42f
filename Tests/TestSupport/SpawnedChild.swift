import CMITMShims
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child started with `posix_spawn` and reaped with `waitpid`, for `Subprocess`. Foundation's `Process` learns of
/// an exit through a Dispatch read source, and under a loaded parallel test run that notice came late or never (the
/// run's curl and openssl children timed out with all their output written).
struct SpawnedChild {
    let pid: pid_t
    /// The parent's ends: stdin (nil when the child's is /dev/null), stdout, stderr.
    let stdin: FileHandle?
    let stdout: FileHandle
    let stderr: FileHandle
    private var waitStatus: Int32?

    /// Starts `path` with `arguments` and `environment` (the test process's own when nil).
    /// With `mergingStderr`, stderr goes to the stdout pipe, with `inheritingStderr` to the test process's own stderr
    /// (and `stderr` reads nothing in either case). With `outputDescriptor` (a terminal), stdout and stderr both go
    /// there, and neither pipe reads anything.
    init(
        path: String, arguments: [String], environment: [String: String]?, pipeStdin: Bool, mergingStderr: Bool = false,
        inheritingStderr: Bool = false, outputDescriptor: Int32? = nil
    ) throws {
        func pipePair() throws -> (read: Int32, write: Int32) {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else {
                throw SubprocessError(description: "pipe: \(String(cString: strerror(errno)))")
            }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return (ends[0], ends[1])
        }
        let input = pipeStdin ? try pipePair() : nil
        let output = try pipePair()
        let errors = try pipePair()
        let devNull = pipeStdin ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let environmentLines = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = environmentLines.map { strdup($0) } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var child: pid_t = 0
        // The child gets no other descriptor of the test process: a pipe end of another test's child kept open in a
        // long-lived one (an origin) would keep that test from ever seeing its EOF.
        let spawned = mitm_spawn_with_stdio(
            &child, path, argv, envp, input?.read ?? devNull,
            outputDescriptor ?? output.write,
            outputDescriptor ?? (inheritingStderr ? -1 : (mergingStderr ? output.write : errors.write)))
        for descriptor in [input?.read, output.write, errors.write, devNull >= 0 ? devNull : nil].compactMap({ $0 }) {
            Glibc.close(descriptor)
        }
        guard spawned == 0 else {
            for descriptor in [input?.write, output.read, errors.read].compactMap({ $0 }) { Glibc.close(descriptor) }
            throw SubprocessError(description: "cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        pid = child
        stdin = input.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) }
        stdout = FileHandle(fileDescriptor: output.read, closeOnDealloc: true)
        stderr = FileHandle(fileDescriptor: errors.read, closeOnDealloc: true)
    }

    /// Whether the child has exited (reaping it when it has).
    mutating func hasExited() -> Bool {
        if waitStatus != nil { return true }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { waitStatus = status }
        return waitStatus != nil
    }

    /// Kills the child (if it still runs) and reaps it.
    mutating func kill() {
        guard !hasExited() else { return }
        _ = Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        waitStatus = status
    }

    /// The exit code, or the signal number when `terminatedBySignal` (after `hasExited` or `kill`).
    var status: Int32 {
        guard let waitStatus else { return -1 }
        return waitStatus & 0x7f == 0 ? (waitStatus >> 8) & 0xff : waitStatus & 0x7f
    }

    var terminatedBySignal: Bool {
        guard let waitStatus else { return false }
        return waitStatus & 0x7f != 0
    }
}

/// A long-running child (the proxy binary, a fixture server) that tests signal, poll and wait for from any thread.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `child` is only touched under `lock`.
    private let lock = NSLock()
    private var child: SpawnedChild
    public let processIdentifier: pid_t
    /// The parent's end of the child's stdout, with its stderr unless `inheritingStderr`.
    public let output: FileHandle
    /// The parent's end of the child's stdin when `pipeStdin` (closing it is the child's EOF); /dev/null otherwise.
    public let input: FileHandle?

    /// With `terminal`, the child's stdout and stderr are that descriptor (a pseudo-terminal's follower side) and
    /// `output` reads nothing.
    public init(
        path: String, arguments: [String], environment: [String: String]? = nil, pipeStdin: Bool = false,
        inheritingStderr: Bool = false, terminal: FileHandle? = nil
    ) throws {
        child = try SpawnedChild(
            path: path, arguments: arguments, environment: environment, pipeStdin: pipeStdin,
            mergingStderr: !inheritingStderr, inheritingStderr: inheritingStderr,
            outputDescriptor: terminal?.fileDescriptor)
        processIdentifier = child.pid
        output = child.stdout
        input = child.stdin
    }

    public var isRunning: Bool { lock.withLock { !child.hasExited() } }

    /// SIGTERM.
    public func terminate() { _ = Glibc.kill(processIdentifier, SIGTERM) }

    /// The exit code, or the signal number when `terminatedBySignal` (-1 while it runs).
    public var terminationStatus: Int32 {
        lock.withLock {
            _ = child.hasExited()
            return child.status
        }
    }

    /// Waits at most `timeout` for the exit; whether it came.
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// SIGKILL if it still runs, and reaps it.
    public func kill() { lock.withLock { child.kill() } }
}
