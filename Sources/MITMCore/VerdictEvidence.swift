/// The evidence behind a host's verdict in one line: which clients, how many connections, whether each client
/// proved it trusts the proxy's CA, and which expectation decides for the host and where it came from.
package enum VerdictEvidence {
    /// Sets every host's evidence line for the expectations `check` evaluates (a report's own, or those `verify` was
    /// given: the line must name the expectation actually checked).
    package static func attach(to hosts: inout [HostVerdict], check: ExpectationCheck) {
        for index in hosts.indices {
            hosts[index].evidence = line(hosts[index], check: check, deciding: check.owner(of: hosts[index].host))
        }
    }

    /// `client 127.0.0.1 (trust proven); 3 connections; expectation refused:api.example.com from Info.plist (domain api.example.com)`.
    static func line(_ host: HostVerdict, check: ExpectationCheck, deciding: [Expectation]) -> String {
        var parts: [String] = []
        if !host.clients.isEmpty {
            // Per process where the report has it (the pids that reached this host), else per client key.
            let named =
                host.byClient.isEmpty
                ? host.clients.map { (check.clientLabels[$0] ?? $0, $0) } : host.byClient.map { ($0.client, $0.key) }
            let clients = named.map { "\($0.0) (trust \(check.isProven($0.1) ? "proven" : "not proven"))" }
            parts.append("client\(clients.count == 1 ? "" : "s") \(clients.joined(separator: ", "))")
        }
        if let disagreement = host.disagreement { parts.append(disagreement) }
        parts.append(
            host.attempts == 0 ? "no connection" : "\(host.attempts) connection\(host.attempts == 1 ? "" : "s")")
        if deciding.isEmpty {
            parts.append("no expectation")
        } else {
            parts.append(
                deciding.map { expectation in
                    expectation.source.isFlag
                        ? "expectation --expect \(expectation)"
                        : "expectation \(expectation) from \(expectation.source)"
                }.joined(separator: ", "))
        }
        return parts.joined(separator: "; ")
    }
}
