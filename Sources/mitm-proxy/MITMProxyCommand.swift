import ArgumentParser
import Foundation
import MITMProxy

/// The `mitm-proxy` root command: runs the proxy.
struct MITMProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mitm-proxy",
        abstract: "A local man-in-the-middle proxy that proves whether certificate pinning holds.",
        discussion: """
        Point a device or a client at this proxy (HTTP and HTTPS proxy = this host and port) and install the \
        proxy's CA certificate on it (browse to http://mitm.proxy/ through the proxy, or use `mitm-proxy ca export`). \
        The proxy terminates TLS with a certificate forged per host, relays and logs the traffic, and says which \
        connections the client accepted and which it refused.
        """,
        version: LibraryVersions.summary,
        subcommands: [CACommand.self]
    )

    @OptionGroup var proxy: ProxyOptions

    func run() throws {
        try ProxyRunner(options: proxy).runUntilStopped()
    }
}
