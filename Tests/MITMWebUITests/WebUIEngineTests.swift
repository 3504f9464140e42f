import Foundation
import MITMCore
import MITMRules
import Synchronization
import Testing

@testable import MITMWebUI

/// The web UI's acting paths against a stand-in for the proxy (`WebUIEngine`): what the page asks reaches the engine
/// as the engine's own terms, and the engine's answers come back as the page's statuses. No loop, no socket.
@Suite struct WebUIEngineTests {
    /// An engine that writes down what it is asked and answers as told.
    private final class RecordingEngine: WebUIEngine {
        struct Sent: Equatable {
            var method: String
            var target: String
            var body: [UInt8]
            var flow: Int?
            var peer: String?
        }

        struct Answered: Equatable {
            var id: Int
            var edit: BreakpointEdit?
            var peer: String?
        }

        let sent = Mutex<[Sent]>([])
        let answered = Mutex<[Answered]>([])
        let breakpoints = Mutex<[TrafficRule]>([])
        let refusal = Mutex<PauseRefusal?>(nil)
        let listener = Mutex<(@Sendable ([BreakpointPause]) -> Void)?>(nil)
        let paused: [BreakpointPause]

        init(paused: [BreakpointPause] = []) { self.paused = paused }

        func send(
            _ head: HTTPRequestHead, body: [UInt8], replaying flow: Int?, for peer: String?,
            done: @escaping @Sendable (ReplayOutcome) -> Void
        ) {
            sent.withLock {
                $0.append(Sent(method: head.method, target: head.target, body: body, flow: flow, peer: peer))
            }
            done(.answered(status: 201))
        }

        var pausedExchanges: [BreakpointPause] { paused }

        func onPausesChanged(_ listen: @escaping @Sendable ([BreakpointPause]) -> Void) {
            listener.withLock { $0 = listen }
        }

        func answerPause(_ id: Int, _ answer: BreakpointPause.Answer, from peer: String?) -> PauseRefusal? {
            let edit: BreakpointEdit? = if case .continued(let edit) = answer { edit } else { nil }
            answered.withLock { $0.append(Answered(id: id, edit: edit, peer: peer)) }
            return refusal.withLock { $0 }
        }

        var webBreakpoints: [TrafficRule] { breakpoints.withLock { $0 } }

        func setWebBreakpoints(_ rules: [TrafficRule]) { breakpoints.withLock { $0 = rules } }

        func localPage(for request: HTTPRequestHead) -> WebResponse { .text(404, "no local page") }
    }

    private let engine: RecordingEngine
    private let web = WebUI(configuration: WebUIConfiguration(), isOwnAddress: { _ in false }, droppedEvents: { 0 })

    init() {
        let pause = BreakpointPause(
            id: 7,
            exchange: BreakpointPause.Exchange(
                phase: .request, rule: "web UI breakpoint api.test", connection: 2, method: "POST",
                url: "https://api.test/v1", status: nil, headers: [["Accept", "*/*"]], body: .of(Array("{}".utf8)),
                hostFixed: true),
            since: 1_000, abortsAt: 61_000)
        engine = RecordingEngine(paused: [pause])
        web.link(to: engine)
    }

    /// The page's request `method path` with `body`, from this machine, with the page's header on a POST.
    private func request(_ method: String, _ path: String, body: String = "") -> WebRequest {
        var head = HTTPRequestHead(method: method, target: path)
        head.headers.add(name: "Host", value: "127.0.0.1:8888")
        if method == "POST" { head.headers.add(name: "X-Mitm-Proxy-UI", value: "1") }
        return WebRequest(head: head, body: Array(body.utf8), peer: "127.0.0.1")
    }

    /// The whole response `request` gets, waiting for one that comes later (the engine above answers at once).
    private func response(to request: WebRequest) throws -> WebResponse {
        switch web.reply(to: request) {
        case .response(let response): return response
        case .later(let start):
            let answer = Mutex<WebResponse?>(nil)
            start { response in answer.withLock { $0 = response } }
            return try #require(answer.withLock { $0 }, "the engine above answers at once")
        case .eventStream, .notMine:
            Issue.record("\(request.path) is answered with a whole response")
            return .text(500, "not a whole response")
        }
    }

    @Test func aComposedRequestReachesTheEngineAndItsStatusComesBack() throws {
        let order = #"{"method": "PUT", "url": "https://api.test/items/3", "body": "hello"}"#
        let answer = try response(to: request("POST", "/api/send", body: order))
        #expect(answer.status == 200)
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"status":201}"#)
        let sent = engine.sent.withLock { $0 }
        #expect(sent.count == 1)
        #expect(sent.first?.method == "PUT")
        #expect(sent.first?.target == "https://api.test/items/3")
        #expect(sent.first?.body == Array("hello".utf8))
        #expect(sent.first?.flow == nil, "composed, not a resent flow")
        #expect(sent.first?.peer == "127.0.0.1")
    }

    @Test func aPauseAnswerReachesTheEngineWithTheEditAndTheUsersAddress() throws {
        let edit = #"{"url": "https://api.test/v2", "body": "{\"a\":1}"}"#
        let continued = try response(to: request("POST", "/api/paused/7/continue", body: edit))
        #expect(continued.status == 204)
        let aborted = try response(to: request("POST", "/api/paused/7/abort"))
        #expect(aborted.status == 204)
        let answered = engine.answered.withLock { $0 }
        #expect(
            answered == [
                .init(id: 7, edit: BreakpointEdit(url: "https://api.test/v2", body: #"{"a":1}"#), peer: "127.0.0.1"),
                .init(id: 7, edit: nil, peer: "127.0.0.1"),
            ])
    }

    @Test func theEnginesRefusalOfAPauseAnswerBecomesTheStatusThatSaysWhy() throws {
        let cases: [(PauseRefusal, Int)] = [
            (.notPaused("no exchange is paused as number 7"), 404),
            (.forbidden("from another machine, a paused request's URL may change only in its path and query"), 403),
            (.invalid("the method of a paused response cannot change"), 400),
        ]
        for (refusal, status) in cases {
            engine.refusal.withLock { $0 = refusal }
            let answer = try response(to: request("POST", "/api/paused/7/continue"))
            #expect(answer.status == status, "\(refusal)")
        }
        #expect(engine.answered.withLock { $0.count } == 3)
    }

    @Test func thePausedListAndTheBreakpointsAreTheEngines() throws {
        let paused = String(decoding: try response(to: request("GET", "/api/paused")).body, as: UTF8.self)
        #expect(paused.contains(#""id":7"#) && paused.contains(#""url":"https://api.test/v1""#), "\(paused)")
        let set = #"{"breakpoints": [{"match": "api.test/v1", "method": "POST", "at": "both", "timeout": "5m"}]}"#
        let answer = try response(to: request("POST", "/api/breakpoints", body: set))
        #expect(answer.status == 200)
        let rules = engine.breakpoints.withLock { $0 }
        #expect(rules.count == 1)
        #expect(rules.first?.methods == ["POST"])
        #expect(rules.first?.actions.breakpoint?.timeout == 300)
        let listed = String(decoding: try response(to: request("GET", "/api/breakpoints")).body, as: UTF8.self)
        #expect(listed.contains(#""match":"api.test/v1""#) && listed.contains(#""at":"both""#), "\(listed)")
    }

    @Test func withoutAnEngineTheActingPathsSayTheProxyIsNotRunning() throws {
        let alone = WebUI(configuration: WebUIConfiguration(), isOwnAddress: { _ in false }, droppedEvents: { 0 })
        guard case .response(let answer) = alone.reply(to: request("GET", "/api/paused")) else {
            Issue.record("a whole response")
            return
        }
        #expect(answer.status == 503)
    }
}
