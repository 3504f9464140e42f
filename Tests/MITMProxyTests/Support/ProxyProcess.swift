import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The real `mitm-proxy` binary running as a child process, for what only a separate process shows:
/// its peak memory (`VmHWM`), its open descriptors, its console output.
///
/// `@unchecked Sendable`: `output` is guarded by `lock`; everything else is immutable after init.
final class ProxyProcess: @unchecked Sendable {
    let process: ChildProcess
    /// The port it printed.
    let port: Int
    /// The CA directory it uses (removed by `stop()`).
    let caDirectory: String
    private let lock = NSLock()
    private var output: [UInt8] = []

    /// `--port 0 --ca-dir TMP --upstream-ca <test root>` plus `arguments`; waits until it prints where it listens.
    static func start(_ arguments: [String] = []) async throws -> ProxyProcess {
        let pki = try await TestPKI.shared()
        let binary = try BuiltBinary.path()
        let caDirectory = TemporaryDirectory.path("proxy-process-ca")
        let all = ["--port", "0", "--ca-dir", caDirectory, "--upstream-ca", pki.root] + arguments
        return try await DedicatedThread.run {
            try ProxyProcess(binary: binary, arguments: all, caDirectory: caDirectory)
        }
    }

    private init(binary: String, arguments: [String], caDirectory: String) throws {
        self.caDirectory = caDirectory
        process = try ChildProcess(path: binary, arguments: arguments)
        let reader = process.output
        var found: Int?
        // Generous: a sanitized build starting beside a full parallel suite on two cores took more than 15 s. A proxy
        // silent that long is killed, which ends the blocking read below.
        let watchdog = DispatchWorkItem { [process] in process.kill() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        var text = ""
        while found == nil {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            found = Self.listeningPort(in: text)
        }
        watchdog.cancel()
        guard let found else {
            process.kill()
            throw SubprocessError(
                description: "mitm-proxy did not print its port within 60 s (or exited); output: \(text)")
        }
        port = found
        output = Array(text.utf8)
        // Keep draining so a chatty proxy never blocks on a full pipe.
        Thread { [self] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { return }
                lock.withLock { output += chunk }
            }
        }.start()
    }

    /// A test that threw before `stop()` leaves no proxy running.
    deinit {
        process.kill()
    }

    /// The port of `mitm-proxy listening on 127.0.0.1:PORT (`, `0.0.0.0:PORT`, `[::]:PORT`.
    private static func listeningPort(in text: String) -> Int? {
        guard let range = text.range(of: #"listening on (\[[0-9a-f:.]+\]|[0-9.]+):\d+ "#, options: .regularExpression)
        else { return nil }
        let line = text[range].dropLast()
        return line.lastIndex(of: ":").flatMap { Int(line[line.index(after: $0)...]) }
    }

    /// The child's pid.
    var pid: Int32 { process.processIdentifier }

    /// Everything it printed so far (stdout and stderr).
    var outputText: String { lock.withLock { String(decoding: output, as: UTF8.self) } }

    /// Waits (at most `timeout`) until it has printed `text`: a line about a connection comes when the proxy has
    /// finished with it, which may be after the client has seen the end.
    func printed(_ text: String, timeout: Duration = .seconds(20)) async -> Bool {
        await Poll.until(timeout: timeout) { outputText.contains(text) }
    }

    /// A `kB` field of `/proc/PID/status` (`VmHWM`, `VmRSS`).
    func memoryKilobytes(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else {
            throw SubprocessError(description: "no \(field) in /proc/\(pid)/status")
        }
        return value
    }

    /// CPU time it used so far, user and system, in seconds (`/proc/PID/stat` fields 14 and 15).
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name (field 2) may hold spaces: count fields from the `)` that closes it.
        guard let close = stat.lastIndex(of: ")") else {
            throw SubprocessError(description: "unreadable /proc/\(pid)/stat")
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw SubprocessError(description: "no CPU times in /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// How many descriptors it has open.
    func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// How many of its descriptors are sockets (its listener, and one per client or upstream connection).
    func openSocketCount() throws -> Int {
        let directory = "/proc/\(pid)/fd"
        return try FileManager.default.contentsOfDirectory(atPath: directory).count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name))?.hasPrefix("socket:")
                == true
        }
    }

    /// Lowers its descriptor limit (RLIMIT_NOFILE, soft and hard) to `count` with util-linux's `prlimit`.
    func limitDescriptors(to count: Int) async throws {
        let result = try await Subprocess.run("prlimit", ["--pid", String(pid), "--nofile=\(count):\(count)"])
        guard result.succeeded else { throw SubprocessError(description: "prlimit failed: \(result)") }
    }

    /// Lowers its data-segment limit (RLIMIT_DATA: heap and private mappings) to `bytes` with `prlimit`, so that a
    /// runaway allocation ends the proxy instead of filling the machine.
    func limitData(to bytes: Int) async throws {
        let result = try await Subprocess.run("prlimit", ["--pid", String(pid), "--data=\(bytes):\(bytes)"])
        guard result.succeeded else { throw SubprocessError(description: "prlimit failed: \(result)") }
    }

    /// The descriptor count a leak test compares against: taken once only `sockets` sockets are open again (the
    /// count before a warm-up exchange, whose connections close, or idle in the upstream pool for its idle time).
    func descriptorBaseline(sockets: Int, timeout: Duration = .seconds(20)) async throws -> Int {
        guard await Poll.until(timeout: timeout, { (try? openSocketCount()) == sockets }) else {
            throw SubprocessError(
                description: "the proxy kept \(try openSocketCount()) sockets open, \(sockets) expected")
        }
        return try openDescriptorCount()
    }

    /// Waits (at most `timeout`) until the descriptor count is back to `baseline`; the count it saw last.
    func descriptorsAfterSettling(at baseline: Int, timeout: Duration = .seconds(20)) async -> Int {
        var current = -1
        _ = await Poll.until(timeout: timeout) {
            current = (try? openDescriptorCount()) ?? -1
            return current == baseline
        }
        return current
    }

    /// SIGTERM, wait up to five seconds (then SIGKILL), remove the CA directory.
    func stop() async {
        let process = process
        _ = try? await DedicatedThread.run {
            if process.isRunning { process.terminate() }
            if !process.waitForExit(timeout: .seconds(5)) { process.kill() }
        }
        try? FileManager.default.removeItem(atPath: caDirectory)
    }
}
