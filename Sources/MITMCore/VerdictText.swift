/// Verdicts in words a QA engineer understands.
public enum VerdictText {
    /// One console line for a connection verdict.
    public static func line(_ record: ConnectionVerdict) -> String {
        let verdict = record.verdict
        let label = verdict.kind.rawValue.uppercased()
        let alert = verdict.alert.map { " (alert \($0))" } ?? ""
        return "\(record.host): \(label)\(verdict.reason == .alert || verdict.kind == .failed ? alert : "") -- \(explanation(verdict))"
    }

    /// What the verdict means.
    public static func explanation(_ verdict: Verdict) -> String {
        switch (verdict.kind, verdict.reason) {
        case (.intercepted, _):
            return "the client accepted the forged certificate and sent its request: no pinning on this connection"
        case (.refused, .alert):
            return "the client rejected the certificate during the handshake: pinning holds, or the proxy's CA is not installed (check a control host)"
        case (.refused, .closedInHandshake):
            return "the client hung up during the handshake after seeing the certificate, without an alert (as Java and Node do when they reject a certificate)"
        case (.refused, _):
            return "the client closed the connection right after the handshake without sending a request: it checked the certificate itself, as pinning does"
        case (.inconclusive, _):
            return "the handshake completed but the client sent nothing and did not close (a pre-connect?): this proves nothing"
        case (.failed, _):
            let detail = verdict.detail.map { ": \($0)" } ?? ""
            return "the handshake broke for a reason that is not the certificate\(detail); this is a client/proxy incompatibility, not evidence of pinning"
        }
    }

    /// The per-host table printed on exit.
    public static func table(_ hosts: [HostVerdict], expectations: [ExpectationResult]) -> String {
        var lines: [String] = []
        let width = max(4, hosts.map(\.host.count).max() ?? 4)
        lines.append("HOST".padding(toLength: width, withPad: " ", startingAt: 0) + "  VERDICT       ATTEMPTS  HOW")
        for host in hosts {
            let how = host.verdict == .intercepted ? "" : host.how.joined(separator: ", ")
            lines.append(host.host.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + host.verdict.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0) + "  "
                + String(host.attempts).padding(toLength: 8, withPad: " ", startingAt: 0) + "  " + how)
        }
        if hosts.isEmpty { lines.append("(no intercepted TLS connections)") }
        for result in expectations {
            lines.append("\(result.met ? "PASS" : "FAIL")  expect \(result.expectation): \(result.explanation)")
        }
        return lines.joined(separator: "\n")
    }
}
