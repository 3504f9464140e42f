import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `mitm-proxy` binary running as a child process, for what only a separate process shows:
/// its peak memory (`VmHWM`), its open descriptors, its console output.
///
/// `@unchecked Sendable`: `output` is guarded by `lock`; everything else is immutable after init.
final class ProxyProcess: @unchecked Sendable {
    let process: Process
    /// The port it printed.
    let port: Int
    /// The CA directory it uses (removed by `stop()`).
    let caDirectory: String
    private let lock = NSLock()
    private var output: [UInt8] = []
    private let exited = DispatchSemaphore(value: 0)

    /// `--port 0 --ca-dir TMP --upstream-ca <test root>` plus `arguments`; waits until it prints where it listens.
    static func start(_ arguments: [String] = []) async throws -> ProxyProcess {
        let pki = try await TestPKI.shared()
        let binary = try BuiltBinary.path()
        let caDirectory = TemporaryDirectory.path("proxy-process-ca")
        let all = ["--port", "0", "--ca-dir", caDirectory, "--upstream-ca", pki.root] + arguments
        return try await DedicatedThread.run { try ProxyProcess(binary: binary, arguments: all, caDirectory: caDirectory) }
    }

    private init(binary: String, arguments: [String], caDirectory: String) throws {
        self.caDirectory = caDirectory
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let exited = exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let reader = pipe.fileHandleForReading
        var found: Int?
        let deadline = Date().addingTimeInterval(15)
        var text = ""
        while found == nil {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            found = Self.listeningPort(in: text)
            if Date() > deadline { break }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            throw SubprocessError(description: "mitm-proxy did not print its port; output: \(text)")
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

    /// The port of `mitm-proxy listening on 127.0.0.1:PORT (`, `0.0.0.0:PORT`, `[::]:PORT`.
    private static func listeningPort(in text: String) -> Int? {
        guard let range = text.range(of: #"listening on (\[[0-9a-f:.]+\]|[0-9.]+):\d+ "#, options: .regularExpression) else { return nil }
        let line = text[range].dropLast()
        return line.lastIndex(of: ":").flatMap { Int(line[line.index(after: $0)...]) }
    }

    /// The child's pid.
    var pid: Int32 { process.processIdentifier }

    /// Everything it printed so far (stdout and stderr).
    var outputText: String { lock.withLock { String(decoding: output, as: UTF8.self) } }

    /// A `kB` field of `/proc/PID/status` (`VmHWM`, `VmRSS`).
    func memoryKilobytes(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw SubprocessError(description: "no \(field) in /proc/\(pid)/status")
        }
        return value
    }

    /// How many descriptors it has open.
    func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// SIGTERM, wait up to five seconds (then SIGKILL), remove the CA directory.
    func stop() async {
        let process = process
        let exited = exited
        _ = try? await DedicatedThread.run {
            if process.isRunning { process.terminate() }
            if exited.wait(timeout: .now() + .seconds(5)) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                exited.wait()
            }
        }
        try? FileManager.default.removeItem(atPath: caDirectory)
    }
}
