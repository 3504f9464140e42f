import Foundation
import Testing

@testable import MITMCore

/// The web UI's filter language without sockets: text in, a filter or a located mistake out; flows in, a yes or no out.
@Suite struct FlowFilterTests {
    static func flow(
        method: String = "GET", host: String = "api.test", path: String = "/items", status: Int? = 200,
        requestHeaders: HTTPHeaders = ["Host": "api.test"], requestBody: [UInt8] = [],
        responseHeaders: HTTPHeaders = ["Content-Type": "application/json"],
        responseBody: [UInt8] = Array(#"{"token":"Abc123"}"#.utf8),
        failure: String? = nil
    ) -> Flow {
        var record = ExchangeRecord(
            connectionID: 1, scheme: "https", host: host, port: 443,
            request: HTTPRequestHead(method: method, target: path, headers: requestHeaders),
            response: status.map { HTTPResponseHead(status: $0, reason: "", headers: responseHeaders) },
            started: Date(), finished: Date(), failure: failure)
        record.requestBody = CapturedBody(limit: 1 << 20)
        record.requestBody.append(requestBody)
        record.responseBody = CapturedBody(limit: 1 << 20)
        record.responseBody.append(responseBody)
        return Flow(id: 1, content: .exchange(record))
    }

    private func matches(_ text: String, _ flow: Flow = flow()) throws -> Bool {
        try FlowFilter(parsing: text).matches(flow)
    }

    private func mistake(_ text: String) -> FlowFilterError? {
        do {
            _ = try FlowFilter(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    @Test func eachTestLooksAtItsPartOfTheFlow() throws {
        #expect(try matches("~d API.test"))
        #expect(try !matches("~d other.test"))
        #expect(try matches("~m get"))
        #expect(try !matches("~m GE"), "a method is matched whole")
        #expect(try matches("~c 200") && matches("~c 2xx"))
        #expect(try !matches("~c 404") || matches("~c 4xx"))
        #expect(try matches("~u /items"))
        #expect(try matches("~h host:") && matches("~hq \"host: api\"") && !matches("~hs host"))
        #expect(try matches("~t json") && matches("~ts json") && !matches("~tq json"))
        #expect(try matches("~s") && !matches("~q") && !matches("~e") && matches("~all"))
        #expect(try !matches("~websocket") && !matches("~rule"))
    }

    @Test func bodiesAreSearchedAsKeptAndAfterGzip() throws {
        #expect(try matches("~b abc123"), "case-insensitive")
        #expect(try matches("~bs Abc123") && !matches("~bq Abc123"))
        let posted = Self.flow(method: "POST", requestBody: Array("name=secret-value".utf8))
        #expect(try matches("~bq secret-value", posted) && matches("~b secret-value", posted))
        let gzip = Self.flow(
            responseHeaders: ["Content-Encoding": "gzip"], responseBody: Array(Data(base64Encoded: Self.gzippedNeedle)!)
        )
        #expect(try matches("~bs needle-42", gzip), "a gzip body is searched decoded")
        #expect(try !matches("~bs absent", gzip))
    }

    @Test func aWebSocketsMessagesAreItsBodies() throws {
        var flow = Self.flow(status: 101, responseBody: [])
        var webSocket = FlowWebSocket()
        for (direction, text) in [(WebSocketDirection.send, "ping-from-client"), (.receive, "pong-from-server")] {
            var message = WebSocketMessage(direction: direction, opcode: 1, captureLimit: 1000)
            message.payload.append(Array(text.utf8))
            let endpoint = WebSocketEndpoint(
                session: WebSocketSessionID(connectionID: 1), host: "api.test", port: 443, url: "wss://api.test/")
            webSocket.append(WebSocketMessageRecord(endpoint: endpoint, time: Date(), message: message), keeps: true)
        }
        flow.webSocket = webSocket
        #expect(try matches("~websocket", flow))
        #expect(try matches("~bq ping-from", flow) && !matches("~bs ping-from", flow))
        #expect(try matches("~bs pong-from", flow) && matches("~b pong-from", flow))
    }

    @Test func operatorsCombineAsInMitmproxy() throws {
        #expect(try matches("~m GET & ~c 200"))
        #expect(try matches("~m GET ~c 200"), "two filters side by side must both hold")
        #expect(try !matches("~m GET ~c 404"))
        #expect(try matches("~m POST | ~c 200"))
        #expect(try matches("!~m POST"))
        #expect(try !matches("!(~m GET | ~m POST)"))
        #expect(try matches("~m POST | ~m GET & ~c 200"), "& binds tighter than |")
        #expect(try !matches("(~m POST | ~m GET) & ~c 404"))
        #expect(try matches("items"), "a word is looked for in the URL, method, status and verdict")
        #expect(try matches("~d api & \"/items\""))
    }

    @Test func refusalsAreErrorsAndHaveNoBodies() throws {
        let verdict = ConnectionVerdict(
            connectionID: 2, host: "pinned.test", port: 443, verdict: Verdict(kind: .refused, reason: .alert),
            tlsVersion: "TLSv1.3", alpn: nil, offeredALPN: [], shownCertificatePin: "pin=", startedAt: Date(),
            handshakeMilliseconds: 3, decidedAt: Date(), client: nil)
        let refused = Flow(id: 2, content: .handshake(verdict))
        #expect(try matches("~e", refused) && matches("~d pinned", refused) && matches("refused", refused))
        #expect(try !matches("~b x", refused) && !matches("~c 200", refused) && !matches("~m GET", refused))
    }

    @Test func mistakesSayWhatAndWhere() {
        #expect(
            mistake("~d")
                == FlowFilterError(message: "~d needs a value after it, as in ~d example.com", column: 1, length: 2))
        #expect(mistake("~m GET & ~zz x")?.message.hasPrefix("unknown filter ~zz; known: ~d ~m ~c") == true)
        #expect(mistake("~m GET & ~zz x")?.column == 10)
        #expect(mistake("(~m GET") == FlowFilterError(message: "this ( is not closed", column: 1, length: 1))
        #expect(mistake("~m GET )") == FlowFilterError(message: "this ) closes no (", column: 8, length: 1))
        #expect(mistake("~m GET &") == FlowFilterError(message: "& needs a filter after it", column: 8, length: 1))
        #expect(mistake("| ~m GET") == FlowFilterError(message: "| needs a filter before it", column: 1, length: 1))
        #expect(mistake("~m GET !") == FlowFilterError(message: "! needs a filter after it", column: 8, length: 1))
        #expect(
            mistake("~c teapot")
                == FlowFilterError(
                    message: "~c takes a status code (404) or a class of them (4xx), not \"teapot\"", column: 4,
                    length: 6))
        #expect(mistake("~b \"open") == FlowFilterError(message: "this quote is not closed", column: 4, length: 1))
        #expect(mistake("~ x")?.message.hasPrefix("~ needs a filter name") == true)
        #expect(mistake("()") == FlowFilterError(message: "( has nothing inside", column: 1, length: 1))
        #expect(mistake("   ")?.message == "the filter is empty")
        #expect(mistake("é ~d")?.column == 3, "columns count characters, not bytes")
    }

    @Test func quotedValuesKeepSpacesAndOperators() throws {
        let flow = Self.flow(path: "/search?a=1&b=2")
        #expect(try matches("~u \"a=1&b=2\"", flow))
        #expect(try matches("~h 'content-type: application/json'", flow))
        #expect(try FlowFilter(parsing: #"~b "say \"hi\"""#) == .test(.body(#"say "hi""#, .either)))
    }

    /// `{"hidden":"needle-42"}` through `gzip -n`.
    static let gzippedNeedle = "H4sIAAAAAAAAA6tWyshMSUnNU7JSyktNTclJ1TUxUqoFAEGKMtkWAAAA"
}
