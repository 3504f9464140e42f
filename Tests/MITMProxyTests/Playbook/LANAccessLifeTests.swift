import MITMCore
import Testing

@testable import MITMProxy

/// What a client on another machine, and a client without the `--proxy-auth` credentials, meet on one connection,
/// step by step and without a socket: the CONNECT waits for the target, a target on this machine is a `403` instead
/// of a `200`, bytes sent behind the CONNECT are kept, and a missing credential is a `407` before anything is dialled.
@Suite struct LANAccessLifeTests {
    @Test func aConnectFromAnotherMachineToThisMachineIsA403AndNothingIsDialled() throws {
        let play = try ConnectionPlaybook(
            origins: ["db.test:5432"], localTargets: ["db.test:5432"], clientHost: "192.168.1.20")
        play.clientSends("CONNECT db.test:5432 HTTP/1.1\r\nHost: db.test:5432\r\n\r\n")
        let answer = play.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(answer)")
        #expect(!answer.contains("200 Connection Established"))
        #expect(answer.contains("a client on another machine (192.168.1.20) may not reach this machine's services"))
        #expect(play.origin(0) == nil, "no connection was opened to it")
        guard case .lingering = play.state else {
            Issue.record("not lingering after the 403: \(play.state)")
            return
        }
    }

    @Test func theSameConnectFromThisMachineIsAnsweredAtOnce() throws {
        let play = try ConnectionPlaybook(origins: ["db.test:5432"], localTargets: ["db.test:5432"])
        play.clientSends("CONNECT db.test:5432 HTTP/1.1\r\n\r\n")
        #expect(play.clientReceived() == "HTTP/1.1 200 Connection Established\r\n\r\n")
    }

    @Test func aConnectFromAnotherMachineElsewhereIsAnsweredOnceConnectedAndKeepsTheBytesBehindIt() throws {
        let play = try ConnectionPlaybook(
            origins: ["mail.test:25"], localTargets: ["db.test:5432"], clientHost: "192.168.1.20")
        play.clientSends("CONNECT mail.test:25 HTTP/1.1\r\n\r\nEHLO me\r\n")
        #expect(play.clientReceived() == "HTTP/1.1 200 Connection Established\r\n\r\n")
        let origin = try #require(play.origin(0))
        #expect(play.run { origin.takeText() } == "EHLO me\r\n", "the bytes sent right behind the CONNECT went on")
        play.run { origin.send("250 hello\r\n") }
        #expect(play.clientReceived() == "250 hello\r\n")
        guard case .relaying(.raw, for: .tunnel) = play.state else {
            Issue.record("not a raw tunnel: \(play.state)")
            return
        }
    }

    @Test func anUnreachableTargetFromAnotherMachineStillGetsItsTunnelAndThe502Inside() throws {
        let play = try ConnectionPlaybook(clientHost: "192.168.1.20")
        play.clientSends("CONNECT closed.test:80 HTTP/1.1\r\n\r\n")
        #expect(
            play.clientReceived() == "HTTP/1.1 200 Connection Established\r\n\r\n",
            "as for any client: the failure is told inside the tunnel")
        play.clientSends("GET / HTTP/1.1\r\nHost: closed.test\r\n\r\n")
        #expect(play.clientReceived().hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
    }

    @Test func aPlainRequestFromAnotherMachineToThisMachineIsA403AndTheConnectionGoesOn() throws {
        let play = try ConnectionPlaybook(
            origins: ["db.test:80", "origin.test:80"], localTargets: ["db.test:80"], clientHost: "10.0.0.7")
        play.clientSends("GET http://db.test/ HTTP/1.1\r\nHost: db.test\r\n\r\n")
        let answer = play.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n") && answer.contains("(10.0.0.7)"), "\(answer)")
        play.clientSends("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        #expect(play.origin(0) != nil, "the next request on the same connection goes out")
    }

    @Test func withoutTheCredentialsAConnectIsA407AndNothingIsDialled() throws {
        let play = try ConnectionPlaybook(
            origins: ["mail.test:25"], configure: { $0.proxyCredentials = try! ProxyCredentials(parsing: "qa:pw") })
        play.clientSends("CONNECT mail.test:25 HTTP/1.1\r\nProxy-Authorization: Basic cWE6bm9wZQ==\r\n\r\n")
        let answer = play.clientReceived()
        #expect(answer.hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\n"), "\(answer)")
        #expect(answer.contains("\r\nProxy-Authenticate: Basic realm=\"mitm-proxy\", charset=\"UTF-8\"\r\n"))
        #expect(play.origin(0) == nil)
        let authorized = try ConnectionPlaybook(
            origins: ["mail.test:25"], configure: { $0.proxyCredentials = try! ProxyCredentials(parsing: "qa:pw") })
        authorized.clientSends("CONNECT mail.test:25 HTTP/1.1\r\nProxy-Authorization: Basic cWE6cHc=\r\n\r\n")
        #expect(authorized.clientReceived() == "HTTP/1.1 200 Connection Established\r\n\r\n")
    }
}
