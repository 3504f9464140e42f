import Dispatch
import Foundation
import MITMCore
import Synchronization

/// Keeps the `--report` file up to date while the proxy runs (rewritten atomically shortly after each
/// verdict) and writes the final version on exit.
public final class ReportWriter: Sendable {
    private let path: String
    private let server: ProxyServer
    private let expectations: [Expectation]
    private let queue = DispatchQueue(label: "mitm-proxy.report")
    private let scheduled = Mutex(false)
    private let onError: @Sendable (String) -> Void

    /// A writer for `path`; checks now that the directory is writable.
    public init(path: String, server: ProxyServer, expectations: [Expectation], onError: @escaping @Sendable (String) -> Void) throws(ProxyStartError) {
        self.path = path
        self.server = server
        self.expectations = expectations
        self.onError = onError
        let directory = (path as NSString).deletingLastPathComponent
        guard FileManager.default.isWritableFile(atPath: directory.isEmpty ? "." : directory) else {
            throw ProxyStartError("--report \(path): the directory \(directory.isEmpty ? "." : directory) is missing or not writable")
        }
    }

    /// The report as of now.
    public func report(final: Bool) -> VerdictReport {
        VerdictReport(final: final, listen: server.listenAddress, caCertificate: server.caCertificatePath,
                      silenceWindowSeconds: server.configuration.silenceWindow,
                      connections: server.connectionVerdicts, expectations: expectations)
    }

    /// Schedules a rewrite soon (coalescing bursts of verdicts).
    public func scheduleUpdate() {
        let alreadyScheduled = scheduled.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !alreadyScheduled else { return }
        queue.asyncAfter(deadline: .now() + 0.1) { [self] in
            scheduled.withLock { $0 = false }
            write(report(final: false))
        }
    }

    /// Writes the final report now (blocking) and returns it.
    @discardableResult
    public func writeFinal() -> VerdictReport {
        let final = report(final: true)
        queue.sync { write(final) }
        return final
    }

    private func write(_ report: VerdictReport) {
        do {
            let data = try report.encoded()
            let temporary = path + ".tmp-\(getpid())"
            guard FileManager.default.createFile(atPath: temporary, contents: data) else {
                throw ProxyStartError("cannot create \(temporary)")
            }
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw ProxyStartError(reason)
            }
        } catch {
            onError("cannot write report \(path): \(error)")
        }
    }
}
