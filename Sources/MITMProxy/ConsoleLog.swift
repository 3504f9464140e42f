import Foundation
import MITMCore

/// How much the console says.
public enum ConsoleVerbosity: Int, Sendable, Comparable {
    /// Problems only.
    case quiet
    /// A line per request and per tunnel or TLS outcome.
    case normal
    /// Also every interception and timeout detail.
    case verbose

    public static func < (lhs: ConsoleVerbosity, rhs: ConsoleVerbosity) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Turns proxy events into console lines.
public struct ConsoleLog: Sendable {
    /// The verbosity.
    public let verbosity: ConsoleVerbosity

    /// A formatter at `verbosity`.
    public init(verbosity: ConsoleVerbosity) { self.verbosity = verbosity }

    /// The line for `event`, or nil when this verbosity does not show it.
    public func line(for event: ProxyEvent) -> String? {
        switch event {
        case .exchange(let record):
            let isProblem = record.failure != nil || (record.response?.status ?? 502) >= 500
            guard verbosity >= .normal || isProblem else { return nil }
            return Self.exchangeLine(record)
        case .tunnel(_, let host, let port, let up, let down, let reason):
            guard verbosity >= .normal else { return nil }
            return "TUNNEL \(host):\(port) (not TLS, relayed as is): \(ByteCountText.format(up)) up, \(ByteCountText.format(down)) down; \(reason)"
        case .clientTLSFailed(_, let host, let port, let reason):
            guard verbosity >= .verbose else { return nil }
            return "\(host):\(port): client TLS: \(reason)"
        case .upstreamFailed(_, let host, let port, let reason):
            return "\(host):\(port): upstream failed: \(reason)"
        case .badRequest(_, let peer, let reason):
            return "bad request from \(peer): \(reason)"
        case .intercepted(_, let host, let port, let version, let alpn):
            guard verbosity >= .verbose else { return nil }
            return "\(host):\(port): intercepted (\(version)\(alpn.map { ", \($0)" } ?? ""))"
        case .timedOut(_, let host, let what):
            guard verbosity >= .verbose else { return nil }
            return "\(host ?? "client"): timed out \(what)"
        case .request:
            return nil
        case .connectionOpened(_, let host, let port, let peer):
            guard verbosity >= .verbose else { return nil }
            return "CONNECT \(host):\(port) from \(peer)"
        case .verdict(let record):
            guard verbosity >= .normal || record.verdict.kind != .intercepted else { return nil }
            return VerdictText.line(record)
        }
    }

    static func exchangeLine(_ record: ExchangeRecord) -> String {
        let request = "\(record.request.method) \(record.url)"
        guard let response = record.response else {
            return "\(request) -> failed: \(record.failure ?? "no response")"
        }
        var line = "\(request) -> \(response.status), \(ByteCountText.format(record.responseBodyBytes)), \(record.durationMilliseconds) ms"
        if let failure = record.failure { line += " (\(failure))" }
        return line
    }
}
