import Foundation
import MITMCore
import MITMTLS

/// An intercepted tunnel, from the ClientHello the policy let through to the end of the connection. Its
/// handshakes are stages of the connection's life (`ConnectionLife`); once both are done, `upstream` is where the
/// relay's requests go.
final class Interception {
    let tunnel: Tunnel
    let hello: ClientHello
    let verdict: VerdictTracker
    /// The name the client asked for: its SNI, or the CONNECT host when it sent none.
    let host: String
    /// Set when the client's handshake completes; the relay may release it to the pool and take it back.
    var upstream: InterceptedUpstream?

    init(tunnel: Tunnel, hello: ClientHello, verdict: VerdictTracker) {
        self.tunnel = tunnel
        self.hello = hello.withoutFingerprintLists()
        self.verdict = verdict
        self.host = Self.host(of: tunnel, hello: hello)
    }

    /// The name the client asked for: its SNI, or the CONNECT host when it sent none (or an invalid one).
    /// Behind a `--reverse` port, the origin's host (the client's SNI names the proxy: `localhost`, a hosts-file entry).
    static func host(of tunnel: Tunnel, hello: ClientHello) -> String {
        if tunnel.request == .reverse { return tunnel.host }
        return hello.validServerName ?? tunnel.host
    }

    /// The names the forged certificate holds beside `names`: the client's own SNI behind a `--reverse` port.
    func forgedNames(_ names: [SubjectAlternativeName]) -> [SubjectAlternativeName] {
        guard tunnel.request == .reverse, let name = hello.validServerName else { return names }
        let clientName = ForgeNames.name(for: name)
        return names.contains(clientName) ? names : [clientName] + names
    }

    /// The server name sent upstream: none for an IP address.
    var upstreamServerName: String? { HostName.isIPAddress(host) ? nil : host }
}

/// Where an interception's requests go once the client has accepted the forged certificate.
enum InterceptedUpstream {
    /// A TLS connection to the origin, fresh or reused from the pool.
    case ready(ReadyUpstream)
    /// No upstream could be had: requests are answered with a 502 naming `reason`.
    case failed(reason: String)
    /// An HTTP/2 connection to the origin that other client connections of the loop may share.
    case shared(SharedHTTP2Upstream)
    /// The proxy answers itself (the trust probe).
    case proxyItself
    /// The relay handed the upstream back to the pool.
    case released
}

/// An upstream whose TLS handshake is done, and what reaching it cost.
struct ReadyUpstream {
    let leg: TLSLeg
    let certificate: X509Certificate?
    /// DNS, connect and TLS milliseconds (-1 each for a pooled upstream) and the address, for the HAR.
    let timings: UpstreamConnectionTimings
}
