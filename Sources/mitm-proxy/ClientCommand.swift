import CMITMShims
import Foundation
import MITMProxy

/// A client command run through the proxy, with the proxy and its CA in the environment.
struct ClientCommand {
    let arguments: [String]
    /// The proxy and its CA, as the library gives them to any client (`ProxyServer.clientEnvironment`).
    let proxy: ClientEnvironment
    /// Under `--capture`: the `ip netns exec NAME` in front of the command, and no proxy variables.
    var capturePrefix: [String]? = nil
    /// Told the command's pid once it runs.
    var started: (pid_t) -> Void = { _ in }

    struct LaunchError: Error, CustomStringConvertible {
        let description: String
    }

    /// The environment: the caller's, plus proxy variables (not under capture) and CA paths that common clients read.
    var environment: [String: String] {
        capturePrefix == nil
            ? proxy.applied(to: ProcessInfo.processInfo.environment)
            : proxy.appliedUnderCapture(to: ProcessInfo.processInfo.environment)
    }

    /// Runs the command to its end; SIGINT/SIGTERM to the proxy are passed on to it. Started with posix_spawn, not
    /// Foundation's `Process`, whose `run()` can crash reading /proc/self/fd (swift-corelibs-foundation #5472).
    func runToCompletion() throws -> ClientCommandOutcome {
        let command = [try resolvedExecutable()] + arguments.dropFirst()
        let full = (capturePrefix ?? []) + command
        let path = full[0]
        let argv = full.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let startedAt = ContinuousClock.now
        _ = mitm_become_child_subreaper()
        guard mitm_spawn(&pid, path, argv, envp) == 0 else {
            throw LaunchError(
                description:
                    "cannot run \(arguments[0]): the system refused to start it (is it a program for this machine, with a valid #! line?)"
            )
        }
        let child = pid
        started(child)
        let forwarder = SignalWaiter.forward { kill(child, SIGTERM) }
        var status: Int32 = 0
        var waited = waitpid(pid, &status, 0)
        while waited < 0 && errno == EINTR { waited = waitpid(pid, &status, 0) }
        forwarder.cancel()
        // Orphans the proxy adopted (see mitm_become_child_subreaper) and that ended already.
        var orphanStatus: Int32 = 0
        while waitpid(-1, &orphanStatus, WNOHANG) > 0 {}
        // Without its status the run proves nothing: never read a lost child as one that exited 0.
        guard waited == pid else {
            throw LaunchError(
                description:
                    "lost track of \(arguments[0]) (waitpid: \(String(cString: strerror(errno)))): its result is unknown"
            )
        }
        let signal = status & 0x7f
        let ran = ContinuousClock.now - startedAt
        return ClientCommandOutcome(
            command: ShellWords.quoted(arguments), exitStatus: signal == 0 ? (status >> 8) & 0xff : nil,
            signal: signal == 0 ? nil : signal,
            seconds: ran.inSeconds)
    }

    private func resolvedExecutable() throws -> String {
        let name = arguments[0]
        if name.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: name) else {
                throw LaunchError(description: "client command \(name) is not an executable file")
            }
            return name
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw LaunchError(description: "client command \(name) not found in PATH")
    }
}
