import Foundation

/// The real `mitm-proxy` binary running in the background: waits for its "listening on" line, reads
/// the port from it, and can be signalled. Terminated on deinit so a failing test leaks nothing.
final class RunningProxyProcess: @unchecked Sendable {
    // @unchecked Sendable: the process handle is only used from the owning test.
    let process: ChildProcess
    let port: Int

    /// Starts the binary with `arguments` and waits (up to `timeout`) until it listens.
    init(_ arguments: [String], timeout: Duration = .seconds(20)) throws {
        process = try ChildProcess(path: RepositoryLayout.builtExecutable, arguments: arguments)
        let collected = OutputCollector()
        let reader = process.output
        Thread {
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { return }
                collected.append(chunk)
            }
        }.start()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let text = collected.waitForMore(seconds: 0.2)
            if let range = text.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(text[range].split(separator: ":").last ?? "") ?? 0
                return
            }
            if !process.isRunning { break }
        }
        process.kill()
        throw SubprocessError(
            description: "mitm-proxy did not start listening; output: \(collected.waitForMore(seconds: 0))")
    }

    /// Sends `signal` and waits for the process to exit; returns its status.
    func stop(signal: Int32) -> Int32 {
        kill(process.processIdentifier, signal)
        return waitForExit()
    }

    /// Waits (blocking, at most two minutes) for the process to exit, however it was told to; returns its status.
    func waitForExit() -> Int32 {
        if !process.waitForExit(timeout: .seconds(120)) { process.kill() }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            process.terminate()
            if !process.waitForExit(timeout: .seconds(10)) { process.kill() }
        }
    }
}

/// Output gathered from a pipe by a reading thread, with a wait for more.
private final class OutputCollector: @unchecked Sendable {
    // @unchecked Sendable: every access goes through the condition's lock.
    private let condition = NSCondition()
    private var text = ""

    func append(_ data: Data) {
        condition.lock()
        text += String(decoding: data, as: UTF8.self)
        condition.signal()
        condition.unlock()
    }

    /// The text so far, after waiting up to `seconds` for a new chunk.
    func waitForMore(seconds: Double) -> String {
        condition.lock()
        defer { condition.unlock() }
        _ = condition.wait(until: Date().addingTimeInterval(seconds))
        return text
    }
}
