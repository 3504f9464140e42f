import MITMCore
import MITMIO
import MITMProxy

/// The start-up lines that say where the web UI is and who may open it.
enum WebUIBanner {
    static func lines(server: ProxyServer, configuration: ProxyConfiguration) -> [String] {
        guard let address = server.webUIAddress else { return [] }
        var lines: [String] = []
        let listening = server.webUIPort == nil ? configuration.host : configuration.webUI.host
        if WebAccess.isLoopback(listening) || LocalAddresses.isUnspecified(listening) {
            lines.append("Web UI on this machine: \(address)")
        } else if configuration.webUI.token == nil {
            lines.append(
                "Web UI: none for this machine, as the proxy listens on \(listening) only and the web UI answers loopback "
                    + "clients: add --web-port PORT (a loopback listener) or --web-token TOKEN")
        }
        if let token = configuration.webUI.token {
            let port = server.webUIPort ?? server.port
            let host = server.webUIPort == nil ? configuration.host : configuration.webUI.host
            let shown = LocalAddresses.isUnspecified(host) ? "THIS-MACHINE'S-ADDRESS" : host
            lines.append(
                "Web UI from other machines: http://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)/?token=\(token) "
                    + "(it shows every request, authorization headers included: share the token with care)")
        }
        return lines
    }
}
