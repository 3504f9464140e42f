import Foundation
import MITMCore

/// The web UI's paths: the page and its two files, the JSON the page reads, the downloads, and the live feed.
extension WebUI {
    /// Whether `path` belongs to the web UI (anything else is the proxy's own pages: the CA download).
    static func owns(path: String) -> Bool {
        path == "/" || path == "/index.html" || WebAssets.file(at: path) != nil || path == "/events"
            || path.hasPrefix("/api/")
    }

    /// The answer to `request` (on the web queue).
    func reply(to request: WebRequest) -> WebReply {
        guard Self.owns(path: request.path) else { return .notMine }
        let decision = access.decide(
            WebAccess.Request(
                peer: request.peer, host: request.headers.first("host"),
                queryToken: request.query["token"], headerToken: request.headerToken))
        switch decision {
        case .refused
        where isPage(request.path) && !request.onWebPort && request.query["token"] == nil && request.headerToken == nil:
            // A phone that opens the proxy's address directly (before its Wi-Fi proxy is set) gets the onboarding page.
            return .notMine
        case .refused(let reason):
            return .response(
                .text(
                    403,
                    "\(reason)\nThis machine's CA certificate for devices: /ca.pem (iOS, macOS, Linux), /ca.cer (Android, Windows)."
                ))
        case .allowed(rememberToken: true) where request.path == "/" || request.path == "/index.html":
            // The token leaves the address bar and the history: the cookie carries it from now on.
            var response = WebResponse.text(303, "see /")
            response.extraHeaders = [
                ("Location", "/"),
                ("Set-Cookie", "\(WebAccess.cookieName)=\(access.token ?? ""); Path=/; HttpOnly; SameSite=Strict"),
            ]
            return .response(response)
        case .allowed:
            break
        }
        if let refusal = CrossSiteRequestCheck.refusal(
            method: request.method, path: request.path, headers: request.headers)
        {
            return .response(.text(403, refusal))
        }
        return route(request)
    }

    private func isPage(_ path: String) -> Bool { path == "/" || path == "/index.html" }

    private func route(_ request: WebRequest) -> WebReply {
        if let reply = actionReply(request) { return reply }
        let path = request.path
        switch (request.method, path) {
        case ("GET", "/"), ("GET", "/index.html"), ("HEAD", "/"), ("HEAD", "/index.html"):
            return .response(.ok("text/html; charset=utf-8", WebAssets.page))
        case ("GET", _) where WebAssets.file(at: path) != nil, ("HEAD", _) where WebAssets.file(at: path) != nil:
            let file = WebAssets.file(at: path)!
            return .response(.ok(file.contentType, file.bytes))
        case ("GET", "/events"):
            let hello = ServerSentEvent.frame("hello", #"{"flowLimit":\#(configuration.flowLimit)}"#)
            return .eventStream(initial: hello + (board().flatMap { Self.frame("board", $0) } ?? []))
        case ("GET", "/api/board"):
            guard let board = board() else { return .response(.text(503, "the board is not ready yet")) }
            return .response(.json(board))
        case ("GET", "/api/flows"):
            let (flows, evicted) = self.flows()
            return .response(
                .json(FlowList(flows: flows.map(FlowSummary.init), evicted: evicted, capacity: configuration.flowLimit))
            )
        case ("GET", _) where path.hasPrefix("/api/flows/"):
            guard let id = Int(path.dropFirst("/api/flows/".count)) else {
                return .response(.text(404, "\(path): not a flow number"))
            }
            guard let flow = flow(id: id) else {
                return .response(
                    .text(
                        404,
                        "flow \(id) is no longer kept (the list keeps the last \(configuration.flowLimit), or it was cleared)"
                    ))
            }
            return .response(.json(FlowDetail(flow)))
        case ("GET", "/api/har"):
            return har(of: flows().flows)
        case ("POST", "/api/har"):
            guard let chosen = try? JSONDecoder().decode(FlowChoice.self, from: Data(request.body)) else {
                return .response(.text(400, #"POST /api/har takes {"ids": [flow numbers]}"#))
            }
            return har(of: flows(ids: Set(chosen.ids)))
        case ("POST", "/api/filter"):
            return .response(filter(request.body))
        case ("GET", "/api/report"):
            guard let report = report(), let data = try? report.encoded() else {
                return .response(.text(503, "the report is not ready yet"))
            }
            return .response(
                .attachment("application/json", Array(data), filename: "mitm-proxy-report-\(Self.stamp()).json"))
        case ("POST", "/api/clear"):
            clear()
            return .response(WebResponse(status: 204, reason: "No Content", contentType: "text/plain", body: []))
        case (_, "/"), (_, "/index.html"), (_, "/events"), (_, "/api/board"), (_, "/api/flows"), (_, "/api/report"),
            (_, "/api/clear"),
            (_, "/api/har"), (_, "/api/filter"):
            return .response(.text(405, "\(request.method) is not used on \(path)"))
        default:
            return .response(.text(404, "no page \(path) in the web UI"))
        }
    }

    private func har(of flows: [Flow]) -> WebReply {
        let builder = HARBuilder(redact: configuration.redactHAR)
        do {
            let data = try FlowHAR.document(flows, builder: builder, creatorVersion: ProductVersion.mitmProxy)
            return .response(.attachment("application/json", Array(data), filename: "mitm-proxy-\(Self.stamp()).har"))
        } catch {
            return .response(.text(500, "cannot write the HAR: \(error)"))
        }
    }

    /// `20260321-101502`, local time, for file names.
    private static func stamp() -> String {
        var seconds = time_t(Date().timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return DigitText.padded(parts.tm_year + 1900, width: 4) + DigitText.padded(parts.tm_mon + 1, width: 2)
            + DigitText.padded(parts.tm_mday, width: 2) + "-" + DigitText.padded(parts.tm_hour, width: 2)
            + DigitText.padded(parts.tm_min, width: 2) + DigitText.padded(parts.tm_sec, width: 2)
    }
}

/// `GET /api/flows`.
private struct FlowList: Encodable {
    let flows: [FlowSummary]
    /// Older flows that gave way to newer ones.
    let evicted: Int
    let capacity: Int
}

/// The body of `POST /api/filter`: an expression, and the flows to try it on (all kept ones when absent).
private struct FilterQuery: Decodable {
    let filter: String
    let ids: [Int]?
}

/// The answer of `POST /api/filter`: the flows that match, or what is wrong with the expression.
private struct FilterAnswer: Encodable {
    var ids: [Int]?
    var error: FlowFilterError?
}

extension WebUI {
    /// `POST /api/filter`: evaluated here, where the bodies are (the page holds only the list's rows).
    fileprivate func filter(_ body: [UInt8]) -> WebResponse {
        guard let query = try? JSONDecoder().decode(FilterQuery.self, from: Data(body)) else {
            return .text(400, #"POST /api/filter takes {"filter": "~d example.com", "ids": [flow numbers, optional]}"#)
        }
        let filter: FlowFilter
        do {
            filter = try FlowFilter(parsing: query.filter)
        } catch {
            return .json(FilterAnswer(error: error))
        }
        let candidates = query.ids.map { flows(ids: Set($0)) } ?? flows().flows
        return .json(FilterAnswer(ids: candidates.filter(filter.matches).map(\.id)))
    }
}

/// The body of `POST /api/har`: the flows on screen.
private struct FlowChoice: Decodable {
    let ids: [Int]
}
