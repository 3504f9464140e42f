import Foundation
import Testing

@testable import MITMCore

/// The web UI's flow memory without sockets: events in, flows out, bounded in count and in body bytes.
@Suite struct FlowLogTests {
    static func exchange(connection: Int = 1, path: String = "/", body: Int = 0, limit: Int = 1_048_576) -> ProxyEvent {
        var record = ExchangeRecord(
            connectionID: connection, scheme: "https", host: "api.test", port: 443,
            request: HTTPRequestHead(method: "GET", target: path, headers: ["Host": "api.test"]),
            response: HTTPResponseHead(status: 200, reason: "OK", headers: ["Content-Type": "text/plain"]),
            responseBodyBytes: body, started: Date(), finished: Date())
        record.responseBody = CapturedBody(limit: limit)
        record.responseBody.append([UInt8](repeating: 65, count: body))
        return .exchange(record)
    }

    static func verdict(connection: Int, _ kind: VerdictKind, _ reason: VerdictReason, host: String = "api.test")
        -> ConnectionVerdict
    {
        ConnectionVerdict(
            connectionID: connection, host: host, port: 443, verdict: Verdict(kind: kind, reason: reason),
            tlsVersion: "TLSv1.3", alpn: kind == .intercepted ? "h2" : nil, offeredALPN: ["h2", "http/1.1"],
            shownCertificatePin: "pin=", startedAt: Date(), handshakeMilliseconds: 4, decidedAt: Date(),
            client: "127.0.0.1")
    }

    @Test func aListedExchangeHoldsNoSpareRoomForHeaderFields() {
        var log = FlowLog(capacity: 3, bodyBudget: 1_000_000)
        guard case .exchange(var record) = Self.exchange(body: 10) else { return }
        record.request.headers.fields.reserveCapacity(32)
        record.response?.headers.fields.reserveCapacity(32)
        guard case .added(let flow)? = log.record(.exchange(record)), case .exchange(let listed) = flow.content else {
            Issue.record("added")
            return
        }
        #expect(listed == record, "the listed record says what the event said")
        #expect(listed.request.headers.fields.capacity < 32)
        #expect(listed.response.map { $0.headers.fields.capacity < 32 } == true)
    }

    @Test func aListedExchangeWithoutSpareRoomKeepsItsFieldsWhereTheyAre() {
        // A parser gives a connection's later heads room for as many fields as its last head had: such a head is listed
        // as it is, without copying its fields.
        var log = FlowLog(capacity: 3, bodyBudget: 1_000_000)
        guard case .exchange(var record) = Self.exchange(body: 10) else { return }
        record.request.headers.fields = Array(record.request.headers.fields)
        let storage = record.request.headers.fields.withUnsafeBufferPointer { $0.baseAddress }
        guard case .added(let flow)? = log.record(.exchange(record)), case .exchange(let listed) = flow.content else {
            Issue.record("added")
            return
        }
        #expect(listed == record)
        #expect(listed.request.headers.fields.withUnsafeBufferPointer { $0.baseAddress } == storage)
    }

    @Test func theOldestFlowsGiveWayAtCapacityAndNumbersGoOn() {
        var log = FlowLog(capacity: 3, bodyBudget: 1_000_000)
        for index in 1...5 { _ = log.record(Self.exchange(path: "/\(index)")) }
        #expect(log.count == 3)
        #expect(log.evicted == 2)
        #expect(log.flows.map(\.id) == [3, 4, 5])
        #expect(log.flow(id: 2) == nil)
        guard case .exchange(let record)? = log.flow(id: 4)?.content else {
            Issue.record("flow 4 kept")
            return
        }
        #expect(record.request.target == "/4")
        log.clear()
        #expect(log.count == 0)
        guard case .added(let next)? = log.record(Self.exchange()) else {
            Issue.record("added")
            return
        }
        #expect(next.id == 6, "a page never mistakes a new flow for one it showed before the clear")
    }

    @Test func bodiesOfTheOldestFlowsAreReleasedToStayWithinTheBudget() {
        var log = FlowLog(capacity: 100, bodyBudget: 2_500)
        for _ in 1...3 { _ = log.record(Self.exchange(body: 1_000)) }
        #expect(log.bodyBytes == 2_000)
        guard let first = log.flow(id: 1), let last = log.flow(id: 3) else {
            Issue.record("kept")
            return
        }
        #expect(first.bodiesReleased)
        #expect(!last.bodiesReleased)
        guard case .exchange(let released) = first.content else { return }
        #expect(released.responseBody.bytes.isEmpty)
        #expect(released.responseBody.totalSize == 1_000, "the size stays")
        #expect(FlowDetail(first).response?.body?.note?.contains("no longer in memory") == true)
    }

    @Test func anExchangeCarriesTheTLSFactsOfItsConnection() {
        var log = FlowLog()
        let interception = log.record(.verdict(Self.verdict(connection: 7, .intercepted, .applicationData)))
        #expect(interception == nil, "an interception is no flow")
        guard case .added(let flow)? = log.record(Self.exchange(connection: 7)) else {
            Issue.record("added")
            return
        }
        #expect(flow.tls?.alpn == "h2")
        #expect(FlowDetail(flow).tls?.shownCertificatePin == "pin=")
        guard case .added(let second)? = log.record(Self.exchange(connection: 7)) else {
            Issue.record("added")
            return
        }
        #expect(second.sharedTLS === flow.sharedTLS, "one copy of the connection's facts for all its exchanges")
    }

    @Test func refusedHandshakesAreFlowsAndAnIdleOneLaterInterceptedIsUpdated() {
        var log = FlowLog()
        guard
            case .added(let refused)? = log.record(
                .verdict(Self.verdict(connection: 1, .refused, .alert, host: "pinned.test")))
        else {
            Issue.record("a refusal is a flow")
            return
        }
        #expect(FlowSummary(refused).verdict == "refused")
        #expect(FlowSummary(refused).url == "pinned.test:443")
        guard case .added(let idle)? = log.record(.verdict(Self.verdict(connection: 2, .inconclusive, .idle))) else {
            return
        }
        let update = log.record(.verdict(Self.verdict(connection: 2, .intercepted, .applicationData)))
        guard case .updated(let updated)? = update else {
            Issue.record("updated, got \(String(describing: update))")
            return
        }
        #expect(updated.id == idle.id)
        #expect(FlowSummary(updated).verdict == "intercepted")
        #expect(log.count == 2)
    }

    @Test func untouchedTunnelsAreFlows() {
        var log = FlowLog()
        guard
            case .added(let flow)? = log.record(
                .tunnel(
                    connectionID: 3, host: "mail.test", port: 25, bytesUp: 10, bytesDown: 2_000,
                    reason: "both sides closed", passedThrough: false,
                    started: Date(timeIntervalSince1970: 1_700_000_000)))
        else {
            Issue.record("added")
            return
        }
        let summary = FlowSummary(flow)
        #expect(summary.method == "TUNNEL")
        #expect(summary.time == 1_700_000_000_000, "placed in the list by when it was accepted, not when it ended")
        #expect(summary.size == 2_000)
        #expect(FlowDetail(flow).bytesUp == 10)
        guard
            case .added(let passed)? = log.record(
                .tunnel(
                    connectionID: 4, host: "bank.test", port: 443, bytesUp: 1, bytesDown: 1,
                    reason: "both sides closed", passedThrough: true, started: Date()))
        else {
            Issue.record("added")
            return
        }
        #expect(FlowSummary(passed).method == "PASSTHROUGH", "a tunnel the host lists passed through is named so")
    }

    @Test func aBodyIsTextWhenItIsUTF8AndBase64OtherwiseAndTruncationIsSaid() {
        var head = HTTPHeaders()
        head.add(name: "Content-Type", value: "application/json")
        var text = CapturedBody(limit: 4)
        text.append(Array(#"{"a":1}"#.utf8))
        let truncated = FlowDetail.Body(text, headers: head, released: false)
        #expect(truncated.text == #"{"a""#)
        #expect(truncated.truncated)
        #expect(truncated.note == "truncated: the first 4 of 7 bytes were recorded (--body-limit)")
        var binary = CapturedBody(limit: 100)
        binary.append([0xff, 0x00, 0x10])
        let shown = FlowDetail.Body(binary, headers: ["Content-Type": "image/png"], released: false)
        #expect(shown.base64 == "/wAQ")
        #expect(shown.text == nil)
        var gzip = CapturedBody(limit: 100)
        gzip.append(Array("abc".utf8))
        #expect(
            FlowDetail.Body(gzip, headers: ["Content-Encoding": "gzip"], released: false).base64 == "YWJj",
            "encoded bodies stay bytes")
    }

    @Test func theHAROfChosenFlowsHasTheirEntriesAndTheRefusals() throws {
        var log = FlowLog()
        _ = log.record(Self.exchange(path: "/one", body: 3))
        _ = log.record(.verdict(Self.verdict(connection: 2, .refused, .closedAfterHandshake, host: "pinned.test")))
        _ = log.record(.verdict(Self.verdict(connection: 3, .unused, .unusedDuplicate)))
        let data = try FlowHAR.document(log.flows, builder: HARBuilder(redact: false), creatorVersion: "test")
        let har = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let harLog = try #require(har["log"] as? [String: Any])
        #expect(harLog["version"] as? String == "1.2")
        #expect((harLog["entries"] as? [Any])?.count == 1)
        let errors = try #require(harLog["_tlsErrors"] as? [[String: Any]])
        #expect(errors.map { $0["host"] as? String } == ["pinned.test"], "a spare connection is no TLS error")
    }

    @Test func aWebSocketsMessagesJoinItsFlowLiveAndCountInItsSize() {
        var log = FlowLog(capacity: 10, bodyBudget: 1_000_000)
        let session = WebSocketSessionID(connectionID: 5)
        guard case .exchange(var handshake) = Self.exchange(connection: 5, path: "/echo") else { return }
        handshake.response = HTTPResponseHead(status: 101, reason: "Switching Protocols", headers: [:])
        handshake.webSocket = session
        guard case .added(let opened)? = log.record(.exchange(handshake)) else {
            Issue.record("added")
            return
        }
        #expect(FlowSummary(opened).size == 0)
        let endpoint = WebSocketEndpoint(session: session, host: "api.test", port: 443, url: "wss://api.test/echo")
        var message = WebSocketMessage(direction: .send, opcode: 1, captureLimit: 100)
        message.payload.append(Array("hello".utf8))
        message.wireSize = 5
        guard
            case .updated(let live)? = log.record(
                .webSocketMessage(WebSocketMessageRecord(endpoint: endpoint, time: Date(), message: message)))
        else {
            Issue.record("a message updates its flow")
            return
        }
        #expect(
            FlowSummary(live).size == 5 && FlowSummary(live).messages == 1 && FlowSummary(live).webSocketOpen == true)
        #expect(FlowDetail(live).webSocket?.messages.first?.text == "hello")
        #expect(log.bodyBytes == 5 + FlowWebSocket.entryCost, "kept messages count in the body budget")
        var close = WebSocketCloseRecord(endpoint: endpoint, time: Date(), reason: "both sides closed")
        close.closeCode = 1000
        guard case .updated(let closed)? = log.record(.webSocketClose(close)) else {
            Issue.record("closed")
            return
        }
        #expect(FlowDetail(closed).webSocket?.closeCode == 1000 && FlowSummary(closed).webSocketOpen == false)
        #expect(
            log.record(.webSocketMessage(WebSocketMessageRecord(endpoint: endpoint, time: Date(), message: message)))
                == nil)
    }

    @Test func aRulesOwnAnswerIsMarkedAndClaimsNoOrigin() {
        var log = FlowLog()
        guard case .exchange(var record) = Self.exchange(connection: 9, path: "/teapot") else { return }
        record.rules = ["teapot"]
        record.serverAddress = "127.0.0.1"
        _ = log.record(
            .ruleFired(
                RuleFiring(
                    connectionID: 9, host: "api.test", port: 443, rules: ["teapot"], action: "answered 418",
                    url: record.url, method: "GET")))
        guard case .added(let flow)? = log.record(.exchange(record)) else {
            Issue.record("added")
            return
        }
        #expect(FlowSummary(flow).answeredByRule == true)
        #expect(FlowSummary(flow).rules == ["teapot"])
        let detail = FlowDetail(flow)
        #expect(detail.answeredByRule == "\"teapot\": answered 418")
        #expect(detail.serverAddress == nil, "no origin address for a response no origin sent")
        guard case .added(let plain)? = log.record(Self.exchange(connection: 9, path: "/other")) else { return }
        #expect(FlowSummary(plain).answeredByRule == nil, "a firing belongs to its own request")
    }

    @Test func firingsFindTheirExchangeByItsNumberEvenWhenTwoShareAURL() {
        var log = FlowLog()
        guard case .exchange(var first) = Self.exchange(connection: 4, path: "/same"),
            case .exchange(var second) = Self.exchange(connection: 4, path: "/same")
        else { return }
        first.exchange = 1
        second.exchange = 2
        _ = log.record(.ruleFired(RuleFiring(on: second, rules: ["teapot"], action: "answered 418")))
        guard case .added(let plain)? = log.record(.exchange(first)),
            case .added(let ruled)? = log.record(.exchange(second))
        else {
            Issue.record("added")
            return
        }
        #expect(plain.ruleFirings.isEmpty, "the same URL and method, but another exchange")
        #expect(ruled.ruleFirings.map(\.exchange) == [2])
    }

    @Test func aWebSocketsMessagesStayWithinTheBodyBudget() {
        var log = FlowLog(capacity: 10, bodyBudget: 10_000)
        let session = WebSocketSessionID(connectionID: 6)
        guard case .exchange(var handshake) = Self.exchange(connection: 6, path: "/chatty") else { return }
        handshake.webSocket = session
        _ = log.record(.exchange(handshake))
        let endpoint = WebSocketEndpoint(session: session, host: "api.test", port: 443, url: "wss://api.test/chatty")
        for _ in 1...100 {
            var message = WebSocketMessage(direction: .receive, opcode: 9, captureLimit: 100)
            message.payload.append([])
            _ = log.record(
                .webSocketMessage(WebSocketMessageRecord(endpoint: endpoint, time: Date(), message: message)))
        }
        #expect(log.bodyBytes <= 10_000, "even empty pings cost the budget: \(log.bodyBytes)")
        let flow = log.flow(id: 1)
        #expect(flow?.webSocket?.received == 100, "counted all the same")
        #expect((flow?.webSocket?.messages.count ?? 0) + (flow?.webSocket?.omitted ?? 0) == 100)
    }
}
