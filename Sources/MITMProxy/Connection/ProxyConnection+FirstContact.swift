import MITMCore
import MITMTLS

/// First contact without waiting: when the client's ALPN answer is known before the upstream's, the client's
/// handshake runs while the upstream is reached, with a certificate forged from the SNI and the names the run learned
/// of the host. The relay starts when both handshakes are done.
extension ProxyConnection {
    /// Overlap or not, for an interception about to reach a fresh upstream. Audits of other certificate profiles,
    /// probes, `--reverse` ports (the client's own name joins the certificate) and rule-answered upstreams keep the
    /// order of one handshake after the other.
    func firstContactPlan(_ interception: Interception, profile: CertificateProfile) -> FirstContactPlan {
        let tunnel = interception.tunnel
        switch life.upstreamProgress {
        case .deferred?, .connecting?, .connected?: break
        case .none?, .pooled?, .failed?, nil: return .sequential
        }
        guard profile == .trusted, tunnel.probe == nil, tunnel.request != .reverse, tunnel.answeredByRule == nil,
            interception.hello.validServerName != nil
        else { return .sequential }
        let offer = upstreamALPN(for: interception)
        let key = firstContactKey(interception)
        return context.firstContacts.withLock { $0.plan(key, upstreamOffer: offer) }
    }

    /// Starts the client's handshake now, with a certificate for `names` offering `alpn`, and reaches the upstream.
    /// The upstream is asked for first: when it is connected, its ClientHello leaves before the client's answer is
    /// computed, and the origin works on its own answer meanwhile.
    func interceptOverlapping(_ interception: Interception, names: [SubjectAlternativeName], alpn: [String]) {
        guard let leg = makeClientLeg(interception, names: names, alpn: alpn, after: nil),
            case .overlapping = life.state
        else { return }
        needUpstream()
        guard case .overlapping = life.state else { return }
        leg.startHandshake(initialBytes: interception.tunnel.takePeeked())
    }

    func firstContactKey(_ interception: Interception) -> FirstContactMemo.Key {
        FirstContactMemo.Key(
            host: interception.tunnel.host, port: interception.tunnel.port, serverName: interception.host)
    }

    /// A fresh upstream is ready: the run learns its certificate's names and its protocol for this client's offer;
    /// then the client's handshake starts, or the overlapped one learns its upstream.
    func upstreamReady(_ interception: Interception, _ ready: ReadyUpstream) {
        let names = context.pool(for: loop).forgedNames(primary: interception.host, upstream: ready.certificate)
        let offer = upstreamALPN(for: interception)
        let key = firstContactKey(interception)
        let chose = ready.leg.tls.negotiatedALPN
        context.firstContacts.withLock { $0.learn(key, names: names, offered: offer, chose: chose) }
        if case .overlapping = life.state {
            receive(.overlappedUpstreamSettled(.ready(ready)))
            return
        }
        startClientHandshake(interception, names: names, upstream: .ready(ready))
    }

    /// Both overlapped handshakes are done. A learned protocol the upstream no longer chooses cannot be relayed one to
    /// one: the requests get 502s that say so (the memo holds the new choice for the next connection).
    func relayOverlapped(_ interception: Interception, _ leg: TLSLeg, upstream: InterceptedUpstream) {
        var upstream = upstream
        if case .ready(let ready) = upstream {
            let clientGot = leg.tls.negotiatedALPN
            let upstreamChose = ready.leg.tls.negotiatedALPN
            if FirstContactMemo.protocolChanged(clientGot: clientGot, upstreamChose: upstreamChose) {
                ready.leg.close()
                let reason =
                    "the upstream changed its protocol: it chose \(upstreamChose ?? "no ALPN (HTTP/1.1)") where it "
                    + "chose \(clientGot ?? "HTTP/1.1") earlier in this run; the next connection is offered its new choice"
                context.events.emit(
                    .upstreamFailed(
                        connectionID: id, host: interception.host, port: interception.tunnel.port, reason: reason))
                upstream = .failed(reason: reason)
            }
        }
        interception.verdict.startSilenceWindow(loop: loop)
        clientHandshakeCompleted(interception, leg, upstream: upstream)
    }
}
