import Dispatch
import Foundation
import MITMCore
import Synchronization

/// Keeps the `--report` file up to date while the proxy runs (rewritten atomically shortly after each
/// verdict) and writes the final version on exit. A rewrite costs what the ledger holds (per-host
/// aggregates and a bounded window of connections), never the whole history, and rewrites are spaced so
/// that they take at most about a tenth of one core however busy the proxy is.
@_spi(CommandLine) public final class ReportWriter: Sendable {
    /// The run's report as of now, from the proxy that records it: `final` once the run ended, with how its client
    /// command ended, if it ran one.
    public typealias Snapshot = @Sendable (_ final: Bool, _ clientCommand: ClientCommandOutcome?) -> VerdictReport

    private let path: String
    private let snapshot: Snapshot
    private let queue = DispatchQueue(label: "mitm-proxy.report")
    private let scheduled = Mutex(false)
    private let lastWriteSeconds = Mutex(0.0)
    /// Set (on `queue`) once the final report is written: a rewrite still scheduled must not replace it.
    private let finalWritten = Mutex(false)
    private let onError: @Sendable (String) -> Void

    /// A writer for `path` of the reports `snapshot` makes; checks now that the directory is writable.
    public init(path: String, snapshot: @escaping Snapshot, onError: @escaping @Sendable (String) -> Void)
        throws(RecordingFileError)
    {
        self.path = path
        self.snapshot = snapshot
        self.onError = onError
        let directory = (path as NSString).deletingLastPathComponent
        let shown = directory.isEmpty ? "." : directory
        var info = stat()
        guard stat(shown, &info) == 0 else {
            throw RecordingFileError(
                .report, path: path,
                problem: "cannot use the directory \(shown): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RecordingFileError(.report, path: path, problem: "\(shown) is not a directory")
        }
        guard access(shown, W_OK) == 0 else {
            throw RecordingFileError(
                .report, path: path,
                problem: "cannot write in the directory \(shown): \(String(cString: strerror(errno)))")
        }
    }

    /// The report as of now.
    public func report(final: Bool, clientCommand: ClientCommandOutcome? = nil) -> VerdictReport {
        snapshot(final, clientCommand)
    }

    /// Schedules a rewrite soon (coalescing bursts of verdicts).
    public func scheduleUpdate() {
        let alreadyScheduled = scheduled.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !alreadyScheduled else { return }
        let delay = max(0.1, 9 * lastWriteSeconds.withLock { $0 })
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            scheduled.withLock { $0 = false }
            guard !finalWritten.withLock({ $0 }) else { return }
            let started = DispatchTime.now().uptimeNanoseconds
            write(report(final: false))
            let took = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            lastWriteSeconds.withLock { $0 = took }
        }
    }

    /// Writes the final report now (blocking) and returns it.
    @discardableResult
    public func writeFinal(clientCommand: ClientCommandOutcome? = nil) -> VerdictReport {
        let final = report(final: true, clientCommand: clientCommand)
        queue.sync {
            write(final)
            finalWritten.withLock { $0 = true }
        }
        return final
    }

    private func write(_ report: VerdictReport) {
        let temporary = path + ".tmp-\(getpid())"
        let data: Data
        do {
            data = try report.encoded()
        } catch {
            onError("cannot write report \(path): the report could not be encoded")
            return
        }
        unlink(temporary)
        let descriptor = PrivateFile.openForWriting(temporary, exclusive: true)
        guard descriptor >= 0 else {
            onError("cannot write report \(path): cannot create \(temporary): \(String(cString: strerror(errno)))")
            return
        }
        let written = PrivateFile.writeAll(Array(data), to: descriptor)
        let writeError = errno
        close(descriptor)
        guard written else {
            onError("cannot write report \(path): cannot write \(temporary): \(String(cString: strerror(writeError)))")
            unlink(temporary)
            return
        }
        guard rename(temporary, path) == 0 else {
            onError("cannot write report \(path): rename from \(temporary): \(String(cString: strerror(errno)))")
            unlink(temporary)
            return
        }
    }
}
