/// Verdicts in words a QA engineer understands: one wording per verdict, used by the console, the table
/// and the HAR alike.
package enum VerdictText {
    /// The caveat on every refusal that a client without the proxy's CA produces the same way.
    package static let caCaveat = "pinning holds, or the proxy's CA is not installed (check a control host)"

    /// One console line for a connection verdict: `host:port: REFUSED (alert unknown_ca) -- ...`.
    package static func line(_ record: ConnectionVerdict) -> String {
        let verdict = record.verdict
        var facts: [String] = []
        if verdict.kind == .intercepted {
            facts = [record.tlsVersion, record.alpn, verdict.resumed == true ? "resumed session" : nil].compactMap {
                $0
            }
        } else {
            facts = [verdict.how]
        }
        var detail = facts.isEmpty ? "" : " (\(facts.joined(separator: ", ")))"
        if let identity = record.identity { detail += " by \(identity.label)" }
        if let profile = record.profile {
            let word =
                record.acceptedInvalidCertificate
                ? "ACCEPTED AN INVALID CERTIFICATE" : verdict.kind.rawValue.uppercased()
            return
                "\(record.host):\(record.port) [\(profile)]: \(word)\(detail) -- \(explanation(verdict, profile: profile))"
        }
        return
            "\(record.host):\(record.port): \(verdict.kind.rawValue.uppercased())\(detail) -- \(explanation(verdict))"
    }

    /// The finding of a client that accepted a certificate of `profile`.
    package static func acceptedInvalid(_ profile: CertificateProfile?) -> String {
        let defect = profile.flatMap { profile in profile.defect.map { " (\(profile): \($0))" } } ?? ""
        return
            "CRITICAL: the client ACCEPTED an INVALID certificate\(defect) and sent its request: it does not validate "
            + "certificates, so anyone on its network can read and change this traffic"
    }

    /// What the verdict means when the client was shown a certificate of `profile` (not `trusted`).
    package static func explanation(_ verdict: Verdict, profile: CertificateProfile) -> String {
        guard let defect = profile.defect else {
            if case .key = profile, verdict.kind == .intercepted {
                return
                    "the client accepted a certificate with the key from \(profile.description.dropFirst(4)): its pins include that key"
            }
            return explanation(verdict)
        }
        switch verdict.kind {
        case .intercepted:
            return acceptedInvalid(profile)
        case .refused:
            return
                "the client refused a certificate that is invalid because \(defect): correct (this proves that check, not pinning)"
        case .unused, .inconclusive, .failed:
            return explanation(verdict)
        }
    }
    /// What the verdict means.
    package static func explanation(_ verdict: Verdict) -> String {
        switch (verdict.kind, verdict.reason) {
        case (.intercepted, _) where verdict.resumed == true:
            return
                "the client resumed the TLS session of an earlier full handshake for this host, where it accepted the forged "
                + "certificate, and sent its request: no pinning on this connection"
        case (.intercepted, _):
            return "the client accepted the forged certificate and sent its request: no pinning on this connection"
        case (.refused, .alert):
            return "the client rejected the certificate during the handshake: \(caCaveat)"
        case (.refused, .closedInHandshake):
            return
                "the client hung up during the handshake after seeing the certificate, without an alert (as Java and Node do "
                + "when they reject a certificate): \(caCaveat)"
        case (.refused, _):
            return
                "the client closed the connection right after the handshake without sending a request: it checked the "
                + "certificate itself, as pinning does"
        case (.unused, .abandonedInHandshake):
            return
                "the client gave up on this spare connection during the handshake while it used another connection, open at "
                + "the same time, to the same host: neither an acceptance nor a refusal"
        case (.unused, _):
            return
                "the client closed this spare connection without a request while it used another connection to the same "
                + "host: it accepted the certificate; not a refusal"
        case (.inconclusive, _):
            return
                "the handshake completed but the client sent nothing and did not close (a pre-connect?): this proves nothing"
        case (.failed, _):
            let detail = verdict.detail.map { ": \($0)" } ?? ""
            return
                "the handshake broke for a reason that is not the certificate\(detail); this is a client/proxy incompatibility, "
                + "not evidence of pinning"
        }
    }

    /// Per-kind counts with their ways: `3 refused (closed-after-handshake 2, alert unknown_ca 1), 3 intercepted`.
    package static func counts(_ host: HostVerdict) -> String {
        let order: [VerdictKind] = [.refused, .intercepted, .unused, .inconclusive, .failed]
        return order.compactMap { kind -> String? in
            let count = host.counts[kind]
            guard count > 0 else { return nil }
            let ways = host.counts.ways(of: kind)
            guard kind != .intercepted, !ways.isEmpty else { return "\(count) \(kind.rawValue)" }
            let detail = ways.map { "\($0.way) \($0.count)" }
            return "\(count) \(kind.rawValue) (\(detail.joined(separator: ", ")))"
        }.joined(separator: ", ")
    }

    /// What the upstream did, when it failed: `every request answered 502: <reason>`.
    package static func upstreamNote(_ host: HostVerdict) -> String? {
        guard let upstream = host.upstream, let failure = upstream.lastFailure else { return nil }
        if upstream.requests == 0 { return "upstream failed: \(failure)" }
        if upstream.answeredWith502 == 0 { return nil }
        let share =
            upstream.answeredWith502 == upstream.requests
            ? "every request answered 502" : "\(upstream.answeredWith502) of \(upstream.requests) requests answered 502"
        return "\(share): \(failure)"
    }

    /// The profile a host was shown, and what its verdict means under it: `profile expired: ACCEPTED AN INVALID CERTIFICATE`.
    package static func profileNote(_ host: HostVerdict) -> String? {
        guard let profile = host.profile else { return nil }
        if host.acceptedInvalidCertificate { return "profile \(profile): ACCEPTED AN INVALID CERTIFICATE (CRITICAL)" }
        if profile.isInvalid, host.verdict == .refused {
            return "profile \(profile): refused the invalid certificate (correct)"
        }
        return "profile \(profile)"
    }

    /// Row names: the host, or `host:port` where one host was seen on several ports.
    package static func displayNames(_ hosts: [HostVerdict]) -> [String] {
        var ports: [String: Set<Int>] = [:]
        for host in hosts { if let port = host.port { ports[host.host, default: []].insert(port) } }
        return hosts.map { host in
            guard let port = host.port, ports[host.host, default: []].count > 1 else { return host.host }
            return "\(host.host):\(port)"
        }
    }

    /// The lines under a host's row: its evidence, then its fallbacks and pin-failure reports.
    static func findingLines(_ host: HostVerdict) -> [String] {
        (host.evidence.map { ["evidence: \($0)"] } ?? [])
            + host.fallbacks.map { RunFinding.fallback($0).line }
            + host.pinFailureReports.map { RunFinding.pinFailureReport($0).line }
    }

    /// The per-host table printed on exit, the expectations under it, and the client command's status.
    package static func table(
        _ hosts: [HostVerdict], expectations: [ExpectationResult], client: ClientCommandOutcome? = nil
    ) -> String {
        var lines: [String] = []
        let names = displayNames(hosts)
        let width = max(4, names.map(\.count).max() ?? 4)
        lines.append("HOST".padding(toLength: width, withPad: " ", startingAt: 0) + "  VERDICT       CONNECTIONS")
        for (name, host) in zip(names, hosts) {
            let counts = host.verdict == .unseen ? "none" : self.counts(host)
            lines.append(
                name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + host.verdict.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0) + "  " + counts
                    + (upstreamNote(host).map { "; \($0)" } ?? "") + (profileNote(host).map { "; \($0)" } ?? ""))
            let indent = String(repeating: " ", count: width + 2)
            if let disagreement = host.disagreement { lines.append(indent + disagreement) }
            lines += findingLines(host).map { indent + $0 }
        }
        if hosts.isEmpty { lines.append("(no intercepted TLS connections)") }
        for result in expectations {
            lines.append("\(result.met ? "PASS" : "FAIL")  expect \(result.expectation): \(result.explanation)")
        }
        if let client {
            lines.append("\(client.succeeded ? "PASS" : "FAIL")  client command: \(client.status)")
        }
        return lines.joined(separator: "\n")
    }
}
