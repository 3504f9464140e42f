import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running `Fixtures/origin.py` test origin on an ephemeral loopback port; stopped by `terminate()` or on deinit.
///
/// `@unchecked Sendable`: the only mutable state, `stopped`, is guarded by `lock`.
final class OriginServer: @unchecked Sendable {
    /// Whether the origin speaks TLS, and with which test leaf.
    enum Transport: Sendable {
        /// Plain HTTP.
        case plainHTTP
        /// HTTPS with the leaf's chain from ``TestPKI``.
        case tls(TestPKI.Leaf)
    }

    /// The port the origin listens on.
    let port: UInt16
    /// The address it is bound to, `127.0.0.1` unless started otherwise.
    let host: String
    /// Plain HTTP or TLS.
    let transport: Transport

    // Started with posix_spawn, not Foundation's `Process`: its `run()` can crash reading /proc/self/fd
    // (swift-corelibs-foundation #5472) and its pipes are inherited by children spawned at the same moment.
    private let process: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    /// The body byte at offset `i` of `/bytes`, `/chunked`, `/close-delimited` and `/slow` responses is `i % 251`.
    static func patternBytes(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt8(index % 251)
            }
            initialized = count
        }
    }

    /// Starts origin.py (or another fixture `script` with the same command line and PORT line, such as
    /// h2_origin.py, with `extraArguments`) with python3 and waits up to `timeout` for it to report its port.
    static func start(
        _ transport: Transport = .tls(.origin),
        host: String = "127.0.0.1",
        script: String = RepositoryLayout.originScript,
        extraArguments: [String] = [],
        timeout: Duration = .seconds(30)
    ) async throws -> OriginServer {
        var arguments = [script, "--host", host] + extraArguments
        if case .tls(let leaf) = transport {
            let pki = try await TestPKI.shared()
            arguments += ["--cert", pki.chain(leaf), "--key", pki.key(leaf)]
        }
        let launchArguments = arguments
        return try await DedicatedThread.run {
            try OriginServer(transport: transport, host: host, arguments: launchArguments, timeout: timeout)
        }
    }

    private init(transport: Transport, host: String, arguments: [String], timeout: Duration) throws {
        self.transport = transport
        self.host = host
        let process = try ChildProcess(
            path: try Subprocess.executablePath("python3"), arguments: arguments, pipeStdin: true,
            inheritingStderr: true)
        self.process = process
        defer { try? process.output.close() }
        do {
            port = try Self.readPort(from: process.output.fileDescriptor, timeout: timeout)
        } catch {
            process.kill()
            throw error
        }
    }

    deinit {
        terminate()
    }

    /// `http` or `https`.
    var scheme: String {
        if case .plainHTTP = transport { return "http" }
        return "https"
    }

    /// A URL for `path` on this origin, naming it `hostname` (default: the bound address).
    func url(_ path: String, hostname: String? = nil) -> String {
        let name = hostname ?? host
        let authority = name.contains(":") ? "[\(name)]" : name
        return "\(scheme)://\(authority):\(port)\(path)"
    }

    /// Whether the python process is still running.
    var isRunning: Bool {
        process.isRunning
    }

    /// Closes the origin's stdin and sends SIGTERM; does not wait. Safe to call more than once.
    func terminate() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        try? process.input?.close()
        if process.isRunning { process.terminate() }
    }

    /// Terminates the origin and waits until it has exited, killing it if it takes longer than five seconds.
    func stop() async {
        terminate()
        let process = process
        _ = try? await DedicatedThread.run {
            if !process.waitForExit(timeout: .seconds(5)) { process.kill() }
        }
    }

    private static func readPort(from descriptor: Int32, timeout: Duration) throws -> UInt16 {
        let deadline = DispatchTime.now() + Subprocess.dispatchInterval(timeout)
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline.uptimeNanoseconds else {
                throw SubprocessError(description: "origin.py did not report its port within \(timeout)")
            }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let waitMilliseconds = Int32((deadline.uptimeNanoseconds - now) / 1_000_000 + 1)
            guard poll(&entry, 1, waitMilliseconds) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw SubprocessError(description: "origin.py exited before reporting its port (see stderr)")
            }
            line += buffer[..<count]
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = UInt16(text.dropFirst(5)) else {
            throw SubprocessError(description: "origin.py printed \(text.debugDescription) instead of PORT <n>")
        }
        return port
    }
}
