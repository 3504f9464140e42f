/// ALPN that tells the truth: the upstream is offered what the client offered (of what the proxy can
/// relay), and the client is offered exactly what the upstream chose, so both legs speak the same HTTP
/// version and the relay stays one to one.
enum ALPNPolicy {
    /// Protocols the proxy can relay.
    static let relayable = ["h2", "http/1.1", "http/1.0"]

    /// What to offer the upstream: the client's relayable protocols, in the client's order.
    static func upstreamOffer(clientOffered: [String]) -> [String] {
        // The usual offer (relayable names, each once) is passed on as it is, not copied.
        if clientOffered.indices.allSatisfy({
            relayable.contains(clientOffered[$0]) && !clientOffered[..<$0].contains(clientOffered[$0])
        }) {
            return clientOffered
        }
        var offer: [String] = []
        for name in clientOffered where relayable.contains(name) && !offer.contains(name) {
            offer.append(name)
        }
        return offer
    }

    /// What to offer the client once the upstream handshake is done: the upstream's choice alone, or
    /// nothing when it chose nothing (it then speaks HTTP/1.1, and so does a client that gets no ALPN).
    static func clientOffer(upstreamChose: String?) -> [String] {
        upstreamChose.map { [$0] } ?? []
    }

    /// What to offer the client when there is no upstream to ask (it is unreachable or untrusted, and
    /// every request gets a 502): the client's own first relayable choice.
    static func clientOfferWithoutUpstream(clientOffered: [String]) -> [String] {
        upstreamOffer(clientOffered: clientOffered)
    }
}
