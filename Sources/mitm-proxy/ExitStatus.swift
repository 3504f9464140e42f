import MITMCore

/// The exit codes of `mitm-proxy` (documented in the README's CI section).
enum ExitStatus {
    /// Every expectation holds and the client command, if any, succeeded.
    static let success: Int32 = 0
    /// An expectation does not hold.
    static let expectationsFailed: Int32 = 1
    /// Bad usage or a setup error (CA directory, files, a client command that cannot start).
    static let usageOrSetup: Int32 = 2
    /// The client command failed: its failure is never hidden, whatever the expectations say.
    static let clientCommandFailed: Int32 = 3

    /// The status of a finished run.
    static func of(_ report: VerdictReport) -> Int32 {
        if let client = report.clientCommand, !client.succeeded { return clientCommandFailed }
        return report.expectations.allSatisfy(\.met) ? success : expectationsFailed
    }
}
