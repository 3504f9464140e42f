import ArgumentParser
import Foundation
import MITMProxy

/// The `mitm-proxy` root command; without a subcommand it runs the proxy (`run`).
struct MITMProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mitm-proxy",
        abstract: "A local man-in-the-middle proxy that proves whether certificate pinning holds.",
        discussion: """
            Point a device or a client at this proxy (HTTP and HTTPS proxy = this host and port) and install the \
            proxy's CA certificate on it (browse to http://mitm.proxy/ through the proxy, or use `mitm-proxy ca export`). \
            The proxy terminates TLS with a certificate forged per host, relays and logs the traffic, and says which \
            connections the client accepted and which it refused.

            Every option of the proxy itself (--port, --expect, --report, --har, ...) is listed by `mitm-proxy run --help`; \
            they are given without `run` (mitm-proxy --port 8888).
            """,
        version: LibraryVersions.summary,
        subcommands: [
            RunCommand.self, AuditCommand.self, CACommand.self, VerifyCommand.self, PinsCommand.self, HARCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )
}

/// `mitm-proxy run` (the default): runs the proxy, optionally around a client command.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the proxy (the default command): until Ctrl-C, or around a client command given after --.",
        discussion: """
            Examples:
              mitm-proxy --port 8888
              mitm-proxy --expect refused:api.example.com --expect intercepted:www.example.com -- ./run-app-tests.sh
            With a command, the proxy starts on a free port, runs it with HTTPS_PROXY/HTTP_PROXY pointing at itself and \
            SSL_CERT_FILE, CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE set to the system's roots plus its CA, NODE_EXTRA_CA_CERTS and \
            MITM_PROXY_CA to its CA alone, \
            waits for open verdicts, prints the table and exits 0 when every expectation holds, 1 when one does not, \
            2 on a usage or setup error, 3 when the client command failed (whatever the expectations say).
            """
    )

    @OptionGroup var proxy: ProxyOptions

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp(
            "A client command to run through the proxy (after --); the proxy exits when it ends: 3 if it failed, else the expectations' result.",
            valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if proxy.capture && command.isEmpty {
            throw ValidationError(
                "--capture runs a client command in a network namespace of its own: give the command after -- "
                    + "(mitm-proxy --capture -- curl https://example.com/); for other clients use --transparent-port")
        }
        if let audit = try proxy.parsedExpectations().expectations.first(where: \.outcome.isAuditConclusion) {
            throw ValidationError(
                "--expect \(audit): only `mitm-proxy audit` can decide \(audit.outcome.rawValue): (it needs a round per certificate profile)"
            )
        }
    }

    func run() throws {
        let status = try ProxyRunner(options: proxy, command: command).run()
        if status != 0 { throw ExitCode(status) }
    }
}
