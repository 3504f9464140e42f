import CMITMShims
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A system tool run to its end (`ip`, `nft`), its stdout and stderr read together; stdin is /dev/null or `input`.
/// Started with posix_spawn, not Foundation's `Process` (swift-corelibs-foundation #5472).
struct SystemCommand {
    let status: Int32
    let output: String

    var succeeded: Bool { status == 0 }

    /// The tool named `name`, looked for where administration tools live; nil when it is not installed.
    static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] + path.split(separator: ":").map(String.init)
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `path` with `arguments`, `input` written to its stdin.
    static func run(_ path: String, _ arguments: [String], input: String? = nil) -> SystemCommand {
        var outputPipe: [Int32] = [-1, -1]
        var inputPipe: [Int32] = [-1, -1]
        guard pipe(&outputPipe) == 0, pipe(&inputPipe) == 0 else {
            return SystemCommand(status: -1, output: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for descriptor in outputPipe + inputPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let environment: [String] = ["PATH=/usr/sbin:/sbin:/usr/bin:/bin", "LC_ALL=C"]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = mitm_spawn_with_stdio(&pid, path, argv, envp, inputPipe[0], outputPipe[1], outputPipe[1])
        close(outputPipe[1])
        close(inputPipe[0])
        if spawned == 0, let input {
            var bytes = Array(input.utf8)
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(inputPipe[1], $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break }
                bytes.removeFirst(written)
            }
        }
        close(inputPipe[1])
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(outputPipe[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            if output.count < 1 << 20 { output += chunk[..<count] }
        }
        close(outputPipe[0])
        guard spawned == 0 else {
            return SystemCommand(status: -1, output: "cannot run \(path): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return SystemCommand(
            status: exitStatus,
            output: String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
