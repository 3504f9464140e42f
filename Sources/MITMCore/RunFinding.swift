/// What the recorded events of a run add up to, beyond single connections.
public enum RunFinding: Sendable, Equatable {
    /// A client refused a host, then reached it another way.
    case fallback(Fallback)
    /// The app posted a pin-failure report.
    case pinFailureReport(PinFailureReport)

    /// The host the finding belongs to.
    public var host: String {
        switch self {
        case .fallback(let fallback): fallback.host
        case .pinFailureReport(let report): report.notedHostname
        }
    }

    /// The connection that showed it.
    public var connectionID: Int {
        switch self {
        case .fallback(let fallback): fallback.connectionID
        case .pinFailureReport(let report): report.connectionID
        }
    }

    /// The console's words: `WARNING fallback: ...`, `PIN-FAILURE REPORT ...`.
    public var line: String {
        switch self {
        case .fallback(let fallback): "WARNING fallback: \(fallback.message)"
        case .pinFailureReport(let report): "\(report.isReportOnly ? "WARNING " : "")\(report.summary)"
        }
    }
}
