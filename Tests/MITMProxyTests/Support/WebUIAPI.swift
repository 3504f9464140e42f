import Foundation

/// The web UI's HTTP API of a running proxy, asked with curl as the page asks it: the token (`Authorization: Bearer`)
/// and, on every POST, the `X-Mitm-Proxy-UI` header.
struct WebUIAPI {
    let base: String
    /// The token sent; nil sends none.
    let token: String?
    /// Runs curl with the arguments given (on this machine, or inside a network namespace).
    var curl: @Sendable ([String]) async throws -> SubprocessResult = {
        try await Subprocess.run("curl", $0, timeout: .seconds(50))
    }

    /// `curl` arguments for the API; `csrfHeader: false` leaves the page's POST header out.
    func request(_ method: String, _ path: String, json: String? = nil, csrfHeader: Bool = true) async throws
        -> SubprocessResult
    {
        var arguments = ["-sS", "--max-time", "40", "--noproxy", "*", "-X", method, "-w", "\n%{http_code}"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if method == "POST" && csrfHeader { arguments += ["-H", "X-Mitm-Proxy-UI: 1"] }
        if let json { arguments += ["-H", "Content-Type: application/json", "--data-binary", json] }
        return try await curl(arguments + [base + path])
    }

    /// The body and status of `method path`.
    func call(_ method: String, _ path: String, json: String? = nil, csrfHeader: Bool = true) async throws -> (
        status: Int, body: String
    ) {
        let result = try await request(method, path, json: json, csrfHeader: csrfHeader)
        let text = result.stdoutText
        let split = text.range(of: "\n", options: .backwards)
        let status = Int(text[(split?.upperBound ?? text.startIndex)...]) ?? 0
        return (status, split.map { String(text[..<$0.lowerBound]) } ?? text)
    }

    /// The paused exchanges.
    func paused() async throws -> [JSON] {
        JSON(parsing: try await call("GET", "/api/paused").body)["paused"].array
    }

    /// Waits for `count` paused exchanges and returns them.
    func waitForPaused(_ count: Int = 1) async throws -> [JSON] {
        var list: [JSON] = []
        _ = try await Poll.until(timeout: .seconds(60)) {  // generous: a first contact under a loaded suite
            list = try await paused()
            return list.count >= count
        }
        return list
    }

    /// The kept flows.
    func flows() async throws -> [JSON] {
        JSON(parsing: try await call("GET", "/api/flows").body)["flows"].array
    }
}
