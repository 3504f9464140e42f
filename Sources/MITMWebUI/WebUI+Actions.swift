import Foundation
import MITMCore
import MITMRules
import Synchronization

/// The proxy the web UI acts on, held weakly: the proxy owns the web UI.
final class WebEngineLink: Sendable {
    private struct Weak: @unchecked Sendable {  // @unchecked: only read and written under the mutex
        weak var engine: (any WebUIEngine)?
    }

    private let link = Mutex(Weak())

    /// Links the web UI to `engine`.
    func set(_ engine: any WebUIEngine) { link.withLock { $0.engine = engine } }

    var engine: (any WebUIEngine)? { link.withLock { $0.engine } }
}

/// The web UI's acting paths: resend a flow (as it was, or edited), compose a request, answer paused exchanges, and
/// set breakpoints. Every one is a POST behind the same token and `X-Mitm-Proxy-UI` check as the others (`reply(to:)`).
extension WebUI {
    /// Links the web UI to the proxy it acts on, and feeds open pages the paused exchanges.
    package func link(to engine: any WebUIEngine) {
        engineLink.set(engine)
        engine.onPausesChanged { [weak self] paused in self?.pushPaused(paused) }
    }

    /// The answer to one of the acting paths, or nil when `request` is for another path.
    func actionReply(_ request: WebRequest) -> WebReply? {
        let path = request.path
        guard
            path == "/api/send" || path == "/api/paused" || path.hasPrefix("/api/paused/") || path == "/api/breakpoints"
        else {
            return nil
        }
        guard let engine else { return .response(.text(503, "the proxy is not running")) }
        switch (request.method, path) {
        case ("POST", "/api/send"):
            return send(request, engine: engine)
        case ("GET", "/api/paused"):
            return .response(.json(PausedList(paused: engine.pausedExchanges)))
        case ("POST", _) where path.hasPrefix("/api/paused/"):
            return answerPaused(request, engine: engine)
        case ("GET", "/api/breakpoints"):
            return .response(.json(BreakpointList(engine.webBreakpoints)))
        case ("POST", "/api/breakpoints"):
            return setBreakpoints(request, engine: engine)
        default:
            return .response(.text(405, "\(request.method) is not used on \(path)"))
        }
    }

    // MARK: replay, edit and resend, compose

    private func send(_ request: WebRequest, engine: any WebUIEngine) -> WebReply {
        let order: SendOrder
        do {
            order = try JSONDecoder().decode(SendOrder.self, from: Data(request.body))
        } catch {
            return .response(
                .text(
                    400,
                    #"POST /api/send takes {"flow": n} to resend a flow, with "method", "url", "headers" "#
                        + #"([[name, value]]) and "body" (or "bodyBase64") to change it, or all of those without "flow" to compose one"#
                ))
        }
        let prepared: (head: HTTPRequestHead, body: [UInt8])
        switch order.request(original: order.flow.flatMap { flow(id: $0) }) {
        case .success(let made): prepared = made
        case .failure(let problem): return .response(.text(problem.status, problem.message))
        }
        let peer = request.peer
        return .later { respond in
            engine.send(prepared.head, body: prepared.body, replaying: order.flow, for: peer) { outcome in
                switch outcome {
                case .answered(let status): respond(.json(SendResult(status: status, error: nil)))
                case .failed(let reason):
                    var response = WebResponse.json(SendResult(status: nil, error: reason))
                    response.status = 502
                    response.reason = "Bad Gateway"
                    respond(response)
                }
            }
        }
    }

    // MARK: breakpoints

    private func answerPaused(_ request: WebRequest, engine: any WebUIEngine) -> WebReply {
        let parts = request.path.dropFirst("/api/paused/".count).split(separator: "/")
        guard parts.count == 2, let id = Int(parts[0]), parts[1] == "continue" || parts[1] == "abort" else {
            return .response(
                .text(404, "use POST /api/paused/N/continue (with an optional edit) or /api/paused/N/abort"))
        }
        let answer: BreakpointPause.Answer
        if parts[1] == "abort" {
            answer = .aborted
        } else if request.body.isEmpty {
            answer = .continued(BreakpointEdit())
        } else {
            guard let edit = try? JSONDecoder().decode(BreakpointEdit.self, from: Data(request.body)) else {
                return .response(
                    .text(
                        400,
                        #"the edit is {"method": "GET", "url": "https://...", "status": 200, "headers": [[name, value]], "body": "..."}, each optional"#
                    ))
            }
            answer = .continued(edit)
        }
        switch engine.answerPause(id, answer, from: request.peer) {
        case nil:
            return .response(WebResponse(status: 204, reason: "No Content", contentType: "text/plain", body: []))
        case .notPaused(let problem): return .response(.text(404, problem))
        case .forbidden(let problem): return .response(.text(403, problem))
        case .invalid(let problem): return .response(.text(400, problem))
        }
    }

    private func setBreakpoints(_ request: WebRequest, engine: any WebUIEngine) -> WebReply {
        guard let list = try? JSONDecoder().decode(BreakpointList.self, from: Data(request.body)) else {
            return .response(
                .text(
                    400,
                    #"POST /api/breakpoints takes {"breakpoints": [{"match": "api.example.com/v1", "method": "POST", "at": "both", "timeout": "5m"}]}"#
                ))
        }
        do {
            engine.setWebBreakpoints(try list.rules())
        } catch {
            return .response(.text(400, error.message))
        }
        return .response(.json(BreakpointList(engine.webBreakpoints)))
    }

    /// Sends open pages the paused exchanges (in line with the flow messages).
    func pushPaused(_ paused: [BreakpointPause]) {
        guard let frame = Self.frame("paused", PausedList(paused: paused)) else { return }
        for feed in openFeeds() { feed.pushFlow(frame) }
    }
}

/// `GET /api/paused` and the feed's `paused` message.
private struct PausedList: Encodable {
    let paused: [BreakpointPause]
}

/// The web UI's breakpoints, as `GET` and `POST /api/breakpoints` carry them.
private struct BreakpointList: Codable {
    struct Entry: Codable {
        var match: String
        var method: String?
        var timeout: String?
        /// `request` (when absent), `response` or `both`.
        var at: String?
    }

    var breakpoints: [Entry]

    init(_ rules: [TrafficRule]) {
        breakpoints = rules.map { rule in
            Entry(
                match: rule.pattern.description, method: rule.methods.first,
                timeout: rule.actions.breakpoint.map { QuantityText.duration($0.timeout) },
                at: rule.actions.breakpoint?.phasesText)
        }
    }

    func rules() throws(RuleError) -> [TrafficRule] {
        var rules: [TrafficRule] = []
        for (index, entry) in breakpoints.enumerated() {
            let pattern: URLPattern
            do { pattern = try URLPattern(parsing: entry.match) } catch {
                throw RuleError("breakpoint \(index + 1): \(error)")
            }
            var timeout = Breakpoint.defaultTimeout
            if let text = entry.timeout {
                guard let seconds = QuantityText.seconds(text), seconds > 0, seconds <= RuleActions.longestDelay else {
                    throw RuleError("breakpoint \(index + 1): timeout \"\(text)\" is not a duration like 30s or 5m")
                }
                timeout = seconds
            }
            if let method = entry.method, !method.isEmpty, let problem = BreakpointEdit(method: method).problem {
                throw RuleError("breakpoint \(index + 1): \(problem)")
            }
            var actions = RuleActions()
            do {
                actions.breakpoint = try Breakpoint(phases: entry.at ?? "request", timeout: timeout)
            } catch {
                throw RuleError("breakpoint \(index + 1): \(error)")
            }
            rules.append(
                TrafficRule(
                    name: "web UI breakpoint \(entry.match)", pattern: pattern,
                    methods: entry.method.map { $0.isEmpty ? [] : [$0] } ?? [], actions: actions))
        }
        return rules
    }
}

/// `POST /api/send`'s answer: the status the proxy answered the replay with, or why it did not get one.
private struct SendResult: Encodable {
    let status: Int?
    let error: String?
}
