import MITMCore

/// The QA rules at the connection level: a host that a rule may map to another origin is relayed as HTTP/1.1.
extension ProxyConnection {
    /// The protocols offered to the upstream of `interception`: without `h2` when a rule may send its requests to
    /// another origin, so that both legs speak HTTP/1.1, where each request can go to its own upstream.
    func upstreamALPN(for interception: Interception) -> [String] {
        withoutH2IfRuled(upstreamALPN(for: interception.hello.alpnProtocols), interception)
    }

    /// Intercepts a tunnel whose every request a rule answers: the upstream is never contacted, and the forged
    /// certificate names the host the client asked for. A client that asks (by SNI) for a host the rule does not
    /// cover gets its upstream dialled after all.
    func interceptWithoutUpstream(_ interception: Interception) {
        guard let rule = context.rules.current.answersEveryRequest(host: interception.host, scheme: "https") else {
            interception.tunnel.answeredByRule = nil
            startConnecting(host: interception.tunnel.host, port: interception.tunnel.port)
            return
        }
        startClientHandshake(
            interception, names: [ForgeNames.name(for: interception.host)],
            upstream: .failed(reason: "not contacted: rule \(rule) answers every request"))
    }

    func withoutH2IfRuled(_ offer: [String], _ interception: Interception) -> [String] {
        guard context.rules.current.mayMapRemote(host: interception.host) else { return offer }
        return offer.filter { $0 != "h2" }
    }
}
