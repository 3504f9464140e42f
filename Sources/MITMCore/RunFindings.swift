import Foundation

/// The findings of a run, kept for the report: fallbacks and pin-failure reports, each list bounded.
/// Sans-io: the recorded events go in, the new findings come out.
public struct RunFindings: Sendable {
    /// Findings kept per kind; later ones are counted in `omitted`.
    public static let keptPerKind = 200

    /// Fallbacks seen, oldest first.
    public private(set) var fallbacks: [Fallback] = []
    /// Pin-failure reports seen, oldest first.
    public private(set) var pinFailureReports: [PinFailureReport] = []
    /// Findings beyond `keptPerKind`, not kept.
    public private(set) var omitted = 0
    private var detector: FallbackDetector

    /// Empty findings.
    public init() {
        detector = FallbackDetector()
    }

    /// Takes `event`, delivered at `time`; returns what it reveals.
    public mutating func observe(_ event: ProxyEvent, at time: Date) -> [RunFinding] {
        if case .finding = event { return [] }
        var found = detector.observe(event, at: time).map(RunFinding.fallback)
        if event.carriesRequestBody, case .exchange(let record) = event, let report = PinFailureReport(record) {
            found.append(.pinFailureReport(report))
        }
        for finding in found { keep(finding) }
        return found
    }

    /// The findings about `host`.
    public func about(_ host: String) -> (fallbacks: [Fallback], reports: [PinFailureReport]) {
        (fallbacks.filter { $0.host == host }, pinFailureReports.filter { $0.notedHostname == host })
    }

    private mutating func keep(_ finding: RunFinding) {
        switch finding {
        case .fallback(let fallback) where fallbacks.count < Self.keptPerKind: fallbacks.append(fallback)
        case .pinFailureReport(let report) where pinFailureReports.count < Self.keptPerKind:
            pinFailureReports.append(report)
        default: omitted += 1
        }
    }
}
