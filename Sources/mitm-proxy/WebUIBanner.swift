import MITMIO
import MITMProxy

/// The start-up lines that say where the web UI is and who may open it.
enum WebUIBanner {
    static func lines(server: ProxyServer, configuration: ProxyConfiguration) -> [String] {
        guard let address = server.webUIAddress else { return [] }
        var lines = ["Web UI (this machine only): \(address)"]
        if let token = configuration.webUI.token {
            let port = server.webUIPort ?? server.port
            let host = server.webUIPort == nil ? configuration.host : configuration.webUI.host
            let shown = LocalAddresses.isUnspecified(host) ? "THIS-MACHINE'S-ADDRESS" : host
            lines.append("Web UI from other machines: http://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)/?token=\(token) "
                + "(it shows every request, authorization headers included: share the token with care)")
        }
        return lines
    }
}
