import MITMCore
import Testing

@testable import MITMProxy

/// A proxy connection's life, step by step, with no socket and no waiting: the proxy request, CONNECT,
/// the peek, raw tunnels, plain relaying, every timeout and every kind of close.
@Suite struct ConnectionLifeTests {
    @Test func anAbsoluteFormRequestIsRelayedInOriginForm() throws {
        let play = try ConnectionPlaybook(origins: ["origin.test:80"])
        play.clientSends(
            "GET http://origin.test/x?y=1 HTTP/1.1\r\nHost: evil.test\r\nProxy-Connection: keep-alive\r\n\r\n")
        let origin = try #require(play.origin(0))
        #expect(play.run { origin.takeText() } == "GET /x?y=1 HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        play.run { origin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
        #expect(play.clientReceived() == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        guard case .relaying(.http1, for: .plainRequests) = play.state else {
            Issue.record("not relaying HTTP/1: \(play.state)")
            return
        }
        #expect(play.timeoutReason == .idle)
        #expect(
            play.events.contains {
                if case .exchange(let record) = $0 { record.url == "http://origin.test/x?y=1" } else { false }
            })
    }

    @Test func aRefusedUpstreamIsA502AndTheClientMayGoOn() throws {
        let play = try ConnectionPlaybook(origins: ["origin.test:80"])
        play.clientSends("GET http://closed.test/ HTTP/1.1\r\nHost: closed.test\r\n\r\n")
        #expect(play.clientReceived().hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        #expect(play.origin(0) != nil, "the next request on the same connection goes out")
    }

    @Test func connectAnswers200AndANonTLSTunnelIsRelayedRaw() throws {
        let play = try ConnectionPlaybook(origins: ["mail.test:25"])
        play.clientSends("CONNECT mail.test:25 HTTP/1.1\r\nHost: mail.test:25\r\n\r\n")
        #expect(play.clientReceived() == "HTTP/1.1 200 Connection Established\r\n\r\n")
        #expect(play.timeoutReason == .firstTunnelBytes(host: "mail.test", port: 25))
        play.clientSends("EHLO me\r\n")
        let origin = try #require(play.origin(0))
        #expect(play.run { origin.takeText() } == "EHLO me\r\n")
        play.run { origin.send("250 hello\r\n") }
        #expect(play.clientReceived() == "250 hello\r\n")
        guard case .relaying(.raw, for: .tunnel) = play.state else {
            Issue.record("not a raw tunnel: \(play.state)")
            return
        }
        play.clientEnds()
        play.run { origin.stream.close() }
        #expect(play.isClosed)
        #expect(
            play.events.contains {
                if case .tunnel(_, "mail.test", 25, 9, 11, _, false, _) = $0 { true } else { false }
            })
    }

    @Test func aServerThatSpeaksFirstGetsARawTunnel() throws {
        let play = try ConnectionPlaybook(origins: ["ftp.test:21"])
        play.clientSends("CONNECT ftp.test:21 HTTP/1.1\r\n\r\n")
        _ = play.clientReceived()
        let origin = try #require(play.origin(0))
        play.run { origin.send("220 ready\r\n") }
        #expect(play.clientReceived() == "220 ready\r\n")
    }

    @Test func anIncompleteProxyRequestTimesOutAtTheHandshakeTimeout() throws {
        let play = try ConnectionPlaybook()
        play.clientSends("GET http://origin.test/ HT")
        #expect(play.timeoutReason == .proxyRequest)
        play.advance(seconds: 9.9)
        #expect(!play.isClosed)
        play.advance(seconds: 0.2)
        #expect(play.isClosed && play.clientSawEnd)
        #expect(
            play.events.contains { if case .timedOut(_, _, "reading the proxy request") = $0 { true } else { false } })
    }

    @Test func aTunnelWithoutFirstBytesTimesOut() throws {
        let play = try ConnectionPlaybook(origins: ["quiet.test:443"])
        play.clientSends("CONNECT quiet.test:443 HTTP/1.1\r\n\r\n")
        play.advance(seconds: 10.1)
        #expect(play.isClosed)
        let waited = play.events.compactMap { if case .timedOut(_, _, let what) = $0 { what } else { nil } }
        #expect(waited == ["waiting for the client's first bytes in the tunnel to quiet.test:443"])
    }

    @Test func anIdleRelayClosesAtTheIdleTimeoutAndActivityMovesIt() throws {
        let play = try ConnectionPlaybook(origins: ["origin.test:80"], configure: { $0.idleTimeout = .seconds(5) })
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        play.advance(seconds: 4)
        play.run { origin.send("HTTP/1.1 204 No Content\r\n\r\n") }
        play.advance(seconds: 4)
        #expect(!play.isClosed, "the response moved the idle deadline")
        play.advance(seconds: 1.1)
        #expect(play.isClosed && play.clientSawEnd)
    }

    @Test func aSilentOriginGetsTheClientA504() throws {
        let play = try ConnectionPlaybook(origins: ["origin.test:80"], configure: { $0.idleTimeout = .seconds(5) })
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        play.advance(seconds: 5.1)
        #expect(play.clientReceived().hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"))
        #expect(play.timeoutReason == .lingering)
        play.advance(seconds: 2.1)
        #expect(play.isClosed)
    }

    @Test func aTrickledSecondRequestHeadGetsA408() throws {
        let play = try ConnectionPlaybook(origins: ["origin.test:80"], configure: { $0.handshakeTimeout = .seconds(2) })
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try #require(play.origin(0))
        play.run { origin.send("HTTP/1.1 204 No Content\r\n\r\n") }
        _ = play.clientReceived()
        for _ in 0..<3 {
            play.clientSends("G")
            play.advance(seconds: 0.9)
        }
        #expect(play.clientReceived().hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
    }

    @Test func aClientHangingUpMidTunnelPeekIsAClose() throws {
        let play = try ConnectionPlaybook(origins: ["tls.test:443"])
        play.clientSends("CONNECT tls.test:443 HTTP/1.1\r\n\r\n\u{16}\u{03}\u{01}")
        play.clientEnds()
        #expect(play.isClosed)
        #expect(
            play.events.contains {
                if case .clientTLSFailed(_, "tls.test", 443, let reason) = $0 {
                    reason.contains("middle of its first message")
                } else {
                    false
                }
            })
    }

    @Test func aMalformedProxyRequestIsA400ThenLingers() throws {
        let play = try ConnectionPlaybook()
        play.clientSends("GET / HTTP/1.1\r\nBad Header\r\n\r\n")
        #expect(play.clientReceived().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        guard case .lingering = play.state else {
            Issue.record("not lingering: \(play.state)")
            return
        }
        play.clientEnds()
        #expect(play.isClosed)
    }
}
