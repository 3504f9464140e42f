import MITMCore

/// The QA rules at the connection level: a host with request rules is relayed as HTTP/1.1.
extension ProxyConnection {
    /// The protocols offered to the upstream of `interception`: without `h2` when rules act on its requests, so
    /// that both legs speak HTTP/1.1, where each request can be answered locally, rewritten or sent to its own origin.
    func upstreamALPN(for interception: Interception) -> [String] {
        withoutH2IfRuled(upstreamALPN(for: interception.hello.alpnProtocols), interception)
    }

    func withoutH2IfRuled(_ offer: [String], _ interception: Interception) -> [String] {
        guard context.rules.current.hasRequestRules(forHost: interception.host) else { return offer }
        return offer.filter { $0 != "h2" }
    }
}
