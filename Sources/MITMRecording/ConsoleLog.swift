import Foundation
import MITMCore

/// How much the console says.
@_spi(CommandLine) public enum ConsoleVerbosity: Int, Sendable, Comparable {
    /// Refusals, failed and inconclusive verdicts, trust probes and problems (no requests, no interceptions).
    case quiet
    /// A line per request and per tunnel or TLS outcome.
    case normal
    /// Also every interception and timeout detail, and every WebSocket message.
    case verbose

    /// Quieter first.
    public static func < (lhs: ConsoleVerbosity, rhs: ConsoleVerbosity) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Turns proxy events into console lines: `12:03:04.123 #17 ...`, the local time and the connection id
/// first, so parallel transfers can be matched to their verdicts.
@_spi(CommandLine) public struct ConsoleLog: Sendable {
    /// The verbosity.
    public let verbosity: ConsoleVerbosity

    /// A formatter at `verbosity`.
    public init(verbosity: ConsoleVerbosity) { self.verbosity = verbosity }

    /// The line for `event` at `time`, or nil when this verbosity does not show it.
    public func line(for event: ProxyEvent, at time: Date = Date()) -> String? {
        guard let text = text(for: event) else { return nil }
        // A refused client never became a connection: it has no id.
        return "\(Self.clock(time)) \(Self.connectionID(of: event).map { "#\($0)" } ?? "--") \(text)"
    }

    private func text(for event: ProxyEvent) -> String? {
        switch event {
        case .exchange(let record):
            let isProblem = record.failure != nil || (record.response?.status ?? 502) >= 500
            guard verbosity >= .normal || isProblem else { return nil }
            return Self.exchangeLine(record)
        case .tunnel(_, let host, let port, let up, let down, let reason, let passedThrough, _):
            guard verbosity >= .normal else { return nil }
            let what =
                passedThrough
                ? "PASSTHROUGH \(host):\(port) (host lists: TLS relayed untouched, no verdict)"
                : "TUNNEL \(host):\(port) (not TLS, relayed as is)"
            return "\(what): \(ByteCountText.format(up)) up, \(ByteCountText.format(down)) down; \(reason)"
        case .clientTLSFailed(_, let host, let port, let reason):
            guard verbosity >= .verbose else { return nil }
            return "\(host):\(port): client TLS: \(reason)"
        case .upstreamFailed(_, let host, let port, let reason):
            return "\(host):\(port): upstream failed: \(reason)"
        case .badRequest(_, let peer, let reason):
            return "bad request from \(peer): \(reason)"
        case .clientRefused(let peer, let reason):
            return "refused client \(peer): \(reason)"
        case .intercepted(_, let host, let port, let version, let alpn):
            guard verbosity >= .verbose else { return nil }
            return
                "\(host):\(port): handshake completed (\(version)\(alpn.map { ", \($0)" } ?? "")); waiting for the client's first request"
        case .timedOut(_, let host, let what):
            guard verbosity >= .verbose else { return nil }
            return "\(host ?? "client"): timed out \(what)"
        case .request:
            return nil
        case .connectionOpened(_, let host, let port, let peer):
            guard verbosity >= .verbose else { return nil }
            return "CONNECT \(host):\(port) from \(peer)"
        case .verdict(let record):
            guard
                verbosity >= .normal || record.acceptedInvalidCertificate
                    || (record.verdict.kind != .intercepted && record.verdict.kind != .unused)
            else { return nil }
            return VerdictText.line(record)
        case .proxyProbe(let record, let probe):
            guard verbosity >= .normal || probe == .trust else { return nil }
            return Self.probeLine(record, probe)
        case .finding(let finding):
            return finding.line
        case .ruleFired(let firing):
            return firing.line
        case .webSocketMessage(let record):
            guard verbosity >= .verbose || record.message.problem != nil else { return nil }
            return WebSocketConsoleText.line(record)
        case .webSocketClose(let record):
            guard verbosity >= .normal else { return nil }
            return WebSocketConsoleText.line(record)
        }
    }

    static func probeLine(_ record: ConnectionVerdict, _ probe: ProxyProbe) -> String {
        let client = record.clientLabel
        switch probe {
        case .trust where record.verdict.kind == .intercepted:
            return "trust probe: client \(client) loaded https://\(ProxyProbe.trustHost)/: it trusts the proxy's CA"
        case .trust:
            return
                "trust probe: client \(client) did not load https://\(ProxyProbe.trustHost)/ (\(record.verdict.kind.rawValue), \(record.verdict.how)): "
                + "it does not trust the proxy's CA yet; install it from http://\(ProxyProbe.trustHost)/"
        case .pins:
            return
                "pins probe of \(record.host):\(record.port) (\(record.verdict.kind.rawValue), \(record.verdict.how)): the proxy's own check, "
                + "not counted as the app's traffic"
        }
    }

    static func connectionID(of event: ProxyEvent) -> Int? {
        switch event {
        case .clientRefused: nil
        case .exchange(let record): record.connectionID
        case .tunnel(let id, _, _, _, _, _, _, _), .clientTLSFailed(let id, _, _, _), .upstreamFailed(let id, _, _, _),
            .badRequest(let id, _, _), .intercepted(let id, _, _, _, _), .timedOut(let id, _, _),
            .request(let id, _, _, _, _),
            .connectionOpened(let id, _, _, _):
            id
        case .verdict(let record), .proxyProbe(let record, _): record.connectionID
        case .finding(let finding): finding.connectionID
        case .ruleFired(let firing): firing.connectionID
        case .webSocketMessage(let record): record.endpoint.session.connectionID
        case .webSocketClose(let record): record.endpoint.session.connectionID
        }
    }

    /// `HH:MM:SS.mmm` in local time.
    static func clock(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let milliseconds = Int(date.timeIntervalSince1970 * 1000) % 1000
        return DigitText.padded(parts.tm_hour, width: 2) + ":" + DigitText.padded(parts.tm_min, width: 2) + ":"
            + DigitText.padded(parts.tm_sec, width: 2) + "." + DigitText.padded(milliseconds, width: 3)
    }

    static func exchangeLine(_ record: ExchangeRecord) -> String {
        let request = "\(record.request.method) \(record.url)"
        guard let response = record.response else {
            return "\(request) -> failed: \(record.failure ?? "no response")"
        }
        let version = record.httpVersion == "HTTP/2.0" ? "h2" : record.httpVersion.lowercased()
        var line =
            "\(request) (\(version)) -> \(response.status), \(ByteCountText.format(record.responseBodyBytes)), \(record.durationMilliseconds) ms"
        if let failure = record.failure { line += " (\(failure))" }
        return line
    }
}
