import Foundation
import MITMCore
import Testing

@testable import MITMProxy

/// The web UI's connections without a socket: a direct request to the proxy is served by the web UI (answers come
/// from the web queue, never the loop), other machines are refused, and the live feed stays open.
@Suite struct WebUILifeTests {
    @Test func aDirectRequestFromThisMachineGetsThePageAndTheConnectionIsKeptAlive() throws {
        let play = try ConnectionPlaybook(clientHost: "127.0.0.1")
        play.clientSends("GET / HTTP/1.1\r\nHost: 127.0.0.1:8888\r\n\r\n")
        let page = play.webReply()
        #expect(page.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(page.prefix(300))")
        #expect(page.contains("Content-Security-Policy: default-src 'none'"))
        #expect(page.contains("<title>mitm-proxy</title>"))
        guard case .relaying(.web, for: .webUI) = play.state else {
            Issue.record("not serving the web UI: \(play.state)")
            return
        }
        play.clientSends(
            "GET /api/flows HTTP/1.1\r\nHost: localhost:8888\r\n\r\nGET /app.js HTTP/1.1\r\nHost: localhost:8888\r\n\r\n"
        )
        let both = play.webReply() + play.webReply()
        let flows = try #require(both.range(of: #"{"evicted":0"#) ?? both.range(of: #""flows":[]"#))
        let script = try #require(both.range(of: "Content-Type: text/javascript"))
        #expect(flows.lowerBound < script.lowerBound, "pipelined answers come in order")
        #expect(!play.isClosed)
    }

    @Test func anotherMachineIsRefusedButStillGetsTheCACertificate() throws {
        let play = try ConnectionPlaybook(clientHost: "10.1.2.3")
        play.clientSends("GET /api/flows HTTP/1.1\r\nHost: 192.168.1.2:8888\r\n\r\n")
        let refused = play.webReply()
        #expect(refused.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(refused)")
        #expect(refused.contains("10.1.2.3 is another one"))
        #expect(refused.contains("Connection: close"))
        #expect(play.clientSawEnd, "a refused client's connection ends")
        let next = try ConnectionPlaybook(clientHost: "10.1.2.3")
        next.clientSends("GET /ca.pem HTTP/1.1\r\nHost: 192.168.1.2:8888\r\n\r\n")
        let certificate = next.webReply()
        #expect(certificate.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(certificate.contains("-----BEGIN CERTIFICATE-----"))
    }

    @Test func aPhoneOpeningTheProxysAddressGetsTheOnboardingPageNotTheWebUI() throws {
        let play = try ConnectionPlaybook(clientHost: "192.168.1.40")
        play.clientSends(
            "GET / HTTP/1.1\r\nHost: 192.168.1.2:8888\r\nUser-Agent: Mozilla/5.0 (Linux; Android 14; Pixel 8)\r\n\r\n")
        let page = play.webReply()
        #expect(page.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(page)")
        #expect(
            page.contains("Set this device's proxy to this computer") && page.contains("<section id=\"android\""),
            "\(page)")
        #expect(!page.contains("board-section"), "the web UI's page is this machine's only")
        let withWrongToken = try ConnectionPlaybook(clientHost: "192.168.1.40")
        withWrongToken.clientSends("GET /?token=guessed123 HTTP/1.1\r\nHost: 192.168.1.2:8888\r\n\r\n")
        #expect(
            withWrongToken.webReply().hasPrefix("HTTP/1.1 403 Forbidden\r\n"),
            "a token that does not fit is refused, not redirected")
    }

    @Test func aHeadTrickledInAfterARequestEndsAtTheIdleTimeout() throws {
        let play = try ConnectionPlaybook(clientHost: "127.0.0.1")
        play.clientSends("GET /api/flows HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(play.webReply().hasPrefix("HTTP/1.1 200 OK\r\n"))
        for second in 0..<59 {
            play.clientSends(second == 0 ? "GET / HTTP/1.1\r\nX-Slow: " : "a")
            play.advance(seconds: 1)
        }
        #expect(!play.isClosed)
        play.advance(seconds: 2)
        #expect(play.isClosed, "bytes that never make a request do not keep the connection")
    }

    @Test func clearingNeedsThePageHeader() throws {
        let play = try ConnectionPlaybook(clientHost: "127.0.0.1")
        play.clientSends("POST /api/clear HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        #expect(play.webReply().hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "a form on another site cannot clear the list")
        let page = try ConnectionPlaybook(clientHost: "127.0.0.1")
        page.clientSends(
            "POST /api/clear HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Mitm-Proxy-UI: 1\r\nContent-Length: 0\r\n\r\n")
        #expect(page.webReply().hasPrefix("HTTP/1.1 204 No Content\r\n"))
    }

    @Test func theFilterLanguageIsAnsweredWithFlowsOrAMistakeAndNeedsThePageHeader() throws {
        let forged = try ConnectionPlaybook(clientHost: "127.0.0.1")
        let query = #"{"filter":"~m GET &"}"#
        forged.clientSends(
            "POST /api/filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(query.utf8.count)\r\n\r\n\(query)")
        #expect(
            forged.webReply().hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "as every POST: only the page sends the header")
        let page = try ConnectionPlaybook(clientHost: "127.0.0.1")
        page.clientSends(
            "POST /api/filter HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Mitm-Proxy-UI: 1\r\nContent-Length: \(query.utf8.count)\r\n\r\n\(query)"
        )
        let mistake = page.webReply()
        #expect(
            mistake.hasPrefix("HTTP/1.1 200 OK\r\n") && mistake.contains(#""message":"& needs a filter after it""#)
                && mistake.contains(#""column":8"#), "\(mistake)")
        let record = ExchangeRecord(
            connectionID: 98, scheme: "https", host: "api.test", port: 443,
            request: HTTPRequestHead(method: "DELETE", target: "/item"), started: Date(), finished: Date())
        page.context.events.emit(.exchange(record))
        page.context.events.flush()
        let good = #"{"filter":"~m delete & ~d api"}"#
        page.clientSends(
            "POST /api/filter HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Mitm-Proxy-UI: 1\r\nContent-Length: \(good.utf8.count)\r\n\r\n\(good)"
        )
        let answer = page.webReply()
        #expect(answer.hasSuffix(#"{"ids":[1]}"#), "the page asks on the same connection: \(answer)")
    }

    @Test func theLiveFeedCarriesNewFlowsAndOutlastsTheIdleTimeout() throws {
        let play = try ConnectionPlaybook(clientHost: "127.0.0.1")
        play.clientSends("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        let opened = play.webReply()
        #expect(opened.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"), "\(opened)")
        #expect(opened.contains("event: hello\ndata: {\"flowLimit\":10000}\n\n"))
        #expect(play.context.web?.feedCount == 1)
        let record = ExchangeRecord(
            connectionID: 99, scheme: "https", host: "api.test", port: 443,
            request: HTTPRequestHead(method: "GET", target: "/live"), started: Date(), finished: Date())
        play.context.events.emit(.exchange(record))
        play.context.events.flush()
        play.run {}  // the feed's wake-up on the loop, then the memory stream's delivery
        let pushed = play.clientReceived()
        #expect(pushed.hasPrefix("event: flow\ndata: {"), "\(pushed)")
        #expect(pushed.contains(#""url":"https://api.test/live""#))
        play.advance(seconds: 61)
        #expect(!play.isClosed, "a feed is not idle")
        #expect(play.clientReceived() == ": still here\n\n")
        play.clientEnds()
        #expect(play.isClosed)
        #expect(play.context.web?.feedCount == 0)
    }
}

extension ConnectionPlaybook {
    /// What the client received once the web queue answered the requests sent so far.
    func webReply() -> String {
        context.web?.queue.sync {}
        run {}  // the answer's delivery on the loop, then the memory stream's
        return clientReceived()
    }
}
