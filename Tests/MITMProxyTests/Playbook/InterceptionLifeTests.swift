import Foundation
import MITMCore
import MITMIO
import MITMTLS
import Testing

@testable import MITMProxy

/// Interception without a socket: a TLS client that trusts the proxy CA, an in-memory TLS origin, and the
/// proxy between them, handshakes and verdicts included.
@Suite struct InterceptionLifeTests {
    private static func originTLS() throws -> @Sendable (MemoryStream) -> MemoryTLSPeer {
        try MemoryTLSPeer.origin(host: "api.test")
    }

    @Test func aTrustingClientIsInterceptedAndItsRequestReachesTheOrigin() throws {
        let play = try ConnectionPlaybook(origins: ["api.test:443"], tlsOrigin: try Self.originTLS()) {
            $0.upstreamInsecure = true
        }
        play.clientSends("CONNECT api.test:443 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [play.caCertificatePath])
        let client = play.run {
            play.clientStream.delegate = nil
            return MemoryTLSPeer(
                play.clientStream,
                tls: try! TLSConnection(
                    client: trusting, serverName: "api.test", verifyName: "api.test",
                    alpn: ["http/1.1"]), startsHandshake: true)
        }
        #expect(
            play.run { client.isHandshakeComplete },
            "the client accepted the forged certificate: \(play.run { client.step })")
        guard case .relaying(.http1, for: .interception(let interception)) = play.state,
            case .ready? = play.run({ interception.upstream })
        else {
            Issue.record("not relaying an interception over a ready upstream: \(play.state)")
            return
        }
        play.run { client.send("GET /v1 HTTP/1.1\r\nHost: api.test\r\n\r\n") }
        let origin = try #require(play.dialer.tlsConnections.first)
        #expect(play.run { origin.takeText() } == "GET /v1 HTTP/1.1\r\nHost: api.test\r\n\r\n")
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes") }
        #expect(play.run { client.takeText() } == "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes")
        #expect(
            play.events.contains {
                if case .verdict(let record) = $0 {
                    record.host == "api.test" && record.verdict.kind == .intercepted
                } else {
                    false
                }
            })
    }

    @Test func anInvalidServerNameClosesTheUpstreamReachedForTheTunnel() throws {
        let play = try ConnectionPlaybook(origins: ["api.test:443"])
        play.clientSends("CONNECT api.test:443 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        let origin = try #require(play.origin(0), "dialled when the CONNECT was answered")
        let anyCertificate = try ClientTLSContext(verify: false, extraCAFiles: [])
        let client = play.run {
            play.clientStream.delegate = nil
            return MemoryTLSPeer(
                play.clientStream,
                tls: try! TLSConnection(
                    client: anyCertificate, serverName: "bad..name", verifyName: "api.test", alpn: ["http/1.1"]),
                startsHandshake: true)
        }
        #expect(play.run { !client.isHandshakeComplete })
        #expect(play.isClosed)
        #expect(play.run { origin.ended }, "the upstream connection goes with the tunnel")
        #expect(
            play.events.contains {
                if case .clientTLSFailed(_, _, _, let reason) = $0 {
                    reason.contains("invalid server name")
                } else {
                    false
                }
            })
    }

    @Test func aClientThatDoesNotTrustTheCAIsRefusedWithItsAlert() throws {
        let play = try ConnectionPlaybook(origins: ["api.test:443"], tlsOrigin: try Self.originTLS()) {
            $0.upstreamInsecure = true
        }
        play.clientSends("CONNECT api.test:443 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        let strict = try ClientTLSContext(verify: true, extraCAFiles: [])
        let client = play.run {
            play.clientStream.delegate = nil
            return MemoryTLSPeer(
                play.clientStream,
                tls: try! TLSConnection(
                    client: strict, serverName: "api.test", verifyName: "api.test",
                    alpn: ["http/1.1"]), startsHandshake: true)
        }
        #expect(play.run { client.isHandshakeComplete } == false)
        #expect(play.isClosed)
        #expect(
            play.events.contains {
                if case .verdict(let record) = $0 {
                    record.verdict.kind == .refused && record.verdict.how.contains("unknown_ca")
                } else {
                    false
                }
            })
    }

    @Test func aHandshakeThatNeverEndsTimesOut() throws {
        let play = try ConnectionPlaybook(origins: ["api.test:443"], tlsOrigin: try Self.originTLS()) {
            $0.upstreamInsecure = true
        }
        play.clientSends("CONNECT api.test:443 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        // A ClientHello's first record, cut short.
        play.clientSends("\u{16}\u{03}\u{01}\u{00}")
        play.advance(seconds: 10.1)
        #expect(play.isClosed)
    }

    @Test func anUpstreamThatNeverAnswersTLSStillGetsTheClientAVerdictAndA502() throws {
        // A plain origin that accepts the TCP connection and never says a word.
        let play = try ConnectionPlaybook(origins: ["api.test:443"], configure: { $0.upstreamInsecure = true })
        play.clientSends("CONNECT api.test:443 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        // It offers h2, and the run has not learned what the upstream chooses: one handshake after the other.
        let client = try Self.trustingClient(play, alpn: ["h2", "http/1.1"])
        guard case .upstreamHandshake(let interception, _, _) = play.state else {
            Issue.record("not waiting for the upstream's handshake: \(play.state)")
            return
        }
        #expect(play.run { client.isHandshakeComplete } == false)
        play.advance(seconds: 10.1)
        #expect(
            play.run { client.isHandshakeComplete },
            "the client got a forged certificate although the origin never answered")
        guard case .relaying(.http2, for: .interception) = play.state,
            case .failed? = play.run({ interception.upstream })
        else {
            Issue.record("not relaying 502s: \(play.state)")
            return
        }
        play.run { client.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") }
        #expect(
            play.events.contains {
                if case .verdict(let record) = $0 { record.verdict.kind == .intercepted } else { false }
            })
    }

    @Test func anUpstreamThatNeverAnswersTLSAfterAnOverlappedHandshakeGetsTheClientA502() throws {
        let play = try ConnectionPlaybook(origins: ["api.test:443"], configure: { $0.upstreamInsecure = true })
        play.clientSends("CONNECT api.test:443 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        // Its protocol is known before the upstream answers (HTTP/1.1): its handshake runs while the upstream's does.
        let client = try Self.trustingClient(play, alpn: ["http/1.1"])
        #expect(play.run { client.isHandshakeComplete }, "the client's handshake waited for the upstream's")
        guard case .overlapping(let interception, _, let overlap, _) = play.state, overlap.clientDone else {
            Issue.record("not overlapping the handshakes: \(play.state)")
            return
        }
        // Its request waits unread until the upstream is known.
        play.run { client.send("GET / HTTP/1.1\r\nHost: api.test\r\n\r\n") }
        play.advance(seconds: 10.1)
        guard case .relaying(.http1, for: .interception) = play.state,
            case .failed(let reason)? = play.run({ interception.upstream })
        else {
            Issue.record("not relaying 502s: \(play.state)")
            return
        }
        #expect(reason.contains("TLS handshake timed out"), "\(reason)")
        let response = play.run { client.takeText() }
        #expect(response.hasPrefix("HTTP/1.1 502") && response.contains("TLS handshake timed out"), "\(response)")
        #expect(
            play.events.contains {
                if case .verdict(let record) = $0 { record.verdict.kind == .intercepted } else { false }
            })
    }

    /// A client that trusts the proxy CA, starting its handshake for `api.test` offering `alpn`.
    private static func trustingClient(_ play: ConnectionPlaybook, alpn: [String]) throws -> MemoryTLSPeer {
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [play.caCertificatePath])
        return play.run {
            play.clientStream.delegate = nil
            return MemoryTLSPeer(
                play.clientStream,
                tls: try! TLSConnection(client: trusting, serverName: "api.test", verifyName: "api.test", alpn: alpn),
                startsHandshake: true)
        }
    }
}
