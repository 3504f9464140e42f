import Testing

@testable import MITMCore

/// Who may open the web UI, decided without sockets.
@Suite struct WebAccessTests {
    @Test func thisMachineIsLetInWithoutAToken() {
        let access = WebAccess(token: nil)
        for peer in ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"] {
            #expect(
                access.decide(.init(peer: peer, host: "127.0.0.1:8888")) == .allowed(rememberToken: false), "\(peer)")
        }
        #expect(
            access.decide(.init(peer: "127.0.0.1", host: nil)) == .allowed(rememberToken: false),
            "HTTP/1.0 without Host")
    }

    @Test func anotherMachineIsRefusedAndToldHowToGetIn() {
        let access = WebAccess(token: nil)
        for peer in ["10.0.0.7", "192.168.1.20", "8.8.8.8", "fe80::1", "::ffff:10.0.0.7", "2001:db8::1"] {
            guard case .refused(let reason) = access.decide(.init(peer: peer, host: "192.168.1.2:8888")) else {
                Issue.record("\(peer) let in")
                continue
            }
            #expect(reason.contains(peer))
            #expect(reason.contains("--web-token"))
        }
        guard case .refused = access.decide(.init(peer: nil, host: "127.0.0.1")) else {
            Issue.record("an unknown peer let in")
            return
        }
    }

    @Test func theTokenLetsAnotherMachineInAndAWrongOneDoesNot() {
        let access = WebAccess(token: "s3cret-token")
        #expect(
            access.decide(.init(peer: "10.0.0.7", host: "10.0.0.2:9000", queryToken: "s3cret-token"))
                == .allowed(rememberToken: true))
        #expect(
            access.decide(.init(peer: "10.0.0.7", host: "10.0.0.2:9000", headerToken: "s3cret-token"))
                == .allowed(rememberToken: false))
        guard case .refused(let wrong) = access.decide(.init(peer: "10.0.0.7", host: "x", queryToken: "s3cret-tokem"))
        else {
            Issue.record("a wrong token let in")
            return
        }
        #expect(wrong.contains("wrong"))
        guard case .refused(let missing) = access.decide(.init(peer: "10.0.0.7", host: "x")) else {
            Issue.record("no token let in")
            return
        }
        #expect(missing.contains("?token="))
        #expect(
            access.decide(.init(peer: "127.0.0.1", host: "localhost:8888")) == .allowed(rememberToken: false),
            "this machine needs none")
    }

    @Test func aPageThatRebindsItsNameToLoopbackIsRefused() {
        let access = WebAccess(token: nil)
        for host in ["evil.example:8888", "127.0.0.1.nip.io", "localhost.evil.example", "[::2]:80"] {
            guard case .refused(let reason) = access.decide(.init(peer: "127.0.0.1", host: host)) else {
                Issue.record("Host \(host) let in")
                continue
            }
            #expect(reason.contains(host))
        }
        for host in [
            "localhost", "localhost:8888", "LOCALHOST.", "app.localhost:1", "[::1]:8888", "127.0.0.1", "127.1.2.3:80",
        ] {
            #expect(access.decide(.init(peer: "127.0.0.1", host: host)) == .allowed(rememberToken: false), "\(host)")
        }
    }

    @Test func loopbackAddressesAreRecognisedAndLookAlikesAreNot() {
        #expect(WebAccess.isLoopback("127.0.0.1"))
        #expect(WebAccess.isLoopback("[::1]"))
        #expect(WebAccess.isLoopback("0:0:0:0:0:0:0:1"))
        #expect(!WebAccess.isLoopback("128.0.0.1"))
        #expect(!WebAccess.isLoopback("127.0.0.256"))
        #expect(!WebAccess.isLoopback("127.0.0"))
        #expect(!WebAccess.isLoopback("0.0.0.0"))
        #expect(!WebAccess.isLoopback("::"))
        #expect(!WebAccess.isLoopback("localhost"), "a name is not an address")
    }

    @Test func tokensAreComparedWhole() {
        #expect(WebAccess.constantTimeEqual("abcdefgh", "abcdefgh"))
        #expect(!WebAccess.constantTimeEqual("abcdefgh", "abcdefg"))
        #expect(!WebAccess.constantTimeEqual("abcdefgh", "abcdefgh\u{0}"))
        #expect(!WebAccess.constantTimeEqual("", "a"))
    }
}
