import MITMCore

/// The web UI's defence against cross-site request forgery: a page on another site can make a browser POST here (a
/// form needs no permission), but it cannot add a custom header without the proxy's consent (CORS), and the UI's own
/// page adds `X-Mitm-Proxy-UI` to every POST. Every state-changing path of the UI goes through this one check.
enum CrossSiteRequestCheck {
    static let headerName = "X-Mitm-Proxy-UI"

    /// Why `method` on `path` with `headers` is refused, or nil when it may go on.
    static func refusal(method: String, path: String, headers: HTTPHeaders) -> String? {
        guard method == "POST", headers.first(headerName) == nil else { return nil }
        return "POST \(path) needs the \(headerName) header (the page sends it)"
    }
}
