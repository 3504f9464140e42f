import ArgumentParser
import Dispatch
import Foundation
import MITMCore
import MITMIO
@_spi(CommandLine) import MITMProxy
@_spi(CommandLine) import MITMRecording

/// Runs the proxy in the foreground: until SIGINT/SIGTERM, or until a client command ends. Returns the
/// exit status (`ExitStatus`).
struct ProxyRunner {
    let options: ProxyOptions
    let command: [String]

    func run() throws -> Int32 {
        let console = ConsoleWriter()
        // The console moves to stderr when stdout carries the events or belongs to the client command.
        let say: @Sendable (String) -> Void =
            (options.eventsPath == "-" || !command.isEmpty) ? console.err : console.out
        let inputs = try options.parsedExpectations()
        let expectations = inputs.expectations
        let server: ProxyServer
        let events: EventLogWriter?
        let report: ReportWriter?
        let har: HARWriter?
        var configuration = try options.makeConfiguration(runsClient: !command.isEmpty)
        configuration.webUI.expectations = expectations
        configuration.webUI.token = options.webUIToken()
        var capture: CaptureSetup?
        if options.capture {
            do {
                capture = try CaptureSetup.make(into: &configuration, say: say)
            } catch {
                console.err("mitm-proxy: \(error)")
                return ExitStatus.usageOrSetup
            }
        }
        // Whatever way the run ends from here, what the capture made goes.
        defer { capture?.end() }
        do {
            server = try ProxyServer(configuration: configuration)
            events = try options.eventsPath.map { try EventLogWriter(path: $0) { console.err("mitm-proxy: \($0)") } }
            report = try options.reportPath.map { [server] in
                try ReportWriter(
                    path: $0,
                    snapshot: { server.report(expectations: expectations, final: $0, clientCommand: $1) }
                ) { console.err("mitm-proxy: \($0)") }
            }
            har = try options.harPath.map {
                try HARWriter(path: $0, redact: options.redact, bodyLimit: options.bodyLimit) {
                    console.err("mitm-proxy: \($0)")
                }
            }
        } catch let error as ProxyStartError {
            console.err("mitm-proxy: \(error.message)")
            return ExitStatus.usageOrSetup
        } catch let error as RecordingFileError {
            console.err("mitm-proxy: \(error.message)")
            return ExitStatus.usageOrSetup
        }
        let log = ConsoleLog(verbosity: options.verbosity)
        // Only the events file reads `.request` events (the console does not print them).
        server.subscribe(
            takesRequestEvents: events != nil,
            endOfBatch: {
                events?.flush()
                har?.flush()
            }
        ) { event in
            if let line = log.line(for: event) { say(line) }
            events?.write(event)
            har?.record(event)
            if case .verdict = event { report?.scheduleUpdate() }
        }
        for warning in server.authority.warnings { console.err("warning: \(warning)") }
        if server.authority.wasCreated { say("Created a new CA in \(server.authority.files.directory)") }
        let termination = command.isEmpty ? SignalWaiter.catchTermination() : nil
        let startedAt = Date()
        server.start()
        report?.scheduleUpdate()
        say("mitm-proxy listening on \(server.listenAddress) (HTTP and HTTPS proxy)")
        if let capture {
            do {
                for line in try capture.listenersStarted(server) { say(line) }
            } catch {
                console.err("mitm-proxy: \(error)")
                server.stop()
                return ExitStatus.usageOrSetup
            }
        } else if let transparent = server.transparentAddress {
            say(
                "transparent listener on \(transparent): connections the system redirects here (nftables or iptables REDIRECT) are "
                    + "intercepted like a CONNECT to where they were going")
        }
        say(
            "CA certificate: \(server.caCertificatePath) (\(server.authority.certificate.commonName ?? "mitm-proxy CA"))"
        )
        let banner = ReachabilityBanner(
            listenHost: options.host, port: server.port, access: server.configuration.clientAccess,
            authUser: server.configuration.proxyCredentials?.user, advertised: server.configuration.advertised)
        if command.isEmpty {
            for line in banner.deviceLines { say(line) }
            // Only for a person at a terminal: not in a log file, nor when stdout carries the events.
            if options.eventsPath != "-", isatty(STDOUT_FILENO) == 1, let url = banner.directOnboardingURL {
                for line in OnboardingQRCode.lines(for: url) { say(line) }
            }
        }
        for line in banner.accessLines { say(line) }
        for line in WebUIBanner.lines(server: server, configuration: configuration) { say(line) }
        for (target, port) in server.reversePorts {
            let host = LocalAddresses.isUnspecified(options.host) ? "127.0.0.1" : options.host
            say(
                "Reverse proxy for \(target.url) on \(host.contains(":") ? "[\(host)]" : host):\(port): point the client's base URL at "
                    + "https://localhost:\(port) (or a hosts-file entry for \(target.host) at this machine, port \(port)); it must trust the CA"
            )
        }
        for line in inputs.summary { say(line) }
        let rules = try options.makeConfiguration(runsClient: !command.isEmpty).rules.map(\.name)
        if !rules.isEmpty { say("rules in force: \(rules.joined(separator: "; "))") }
        if let file = options.trafficRules.absoluteRulesFile { say("rules file: \(file) (read again when it changes)") }
        for warning in inputs.warnings { console.err(warning) }
        for warning in HostListCheck(policy: try options.hostLists(), expectations: expectations).warnings {
            console.err(warning)
        }
        if options.trustPerAddress {
            console.err(
                "warning: --trust-per-address: any client of an address proves CA trust for every client of it, so a health "
                    + "check that trusts the CA vouches for an app beside it that never did; a refusal may then mean no CA, not pinning"
            )
        }
        if options.upstreamInsecure {
            console.err(
                "warning: --upstream-insecure: upstream certificates are NOT verified; anyone on the path can impersonate them"
            )
        }
        if server.configuration.clientAccess.reach == .anyone && server.configuration.proxyCredentials == nil {
            console.err(
                "warning: --allow-public-clients without --proxy-auth: anyone who can reach this machine can use the proxy "
                    + "and read what it intercepts; add --proxy-auth USER:PASSWORD")
        }

        var outcome: ClientCommandOutcome?
        if command.isEmpty {
            termination?.wait()
        } else {
            var client = ClientCommand(arguments: command, proxy: server.clientEnvironment)
            if let capture {
                client.capturePrefix = capture.namespace.commandPrefix
                client.started = { pid in
                    server.captureCommandStarted(pid: pid)
                    capture.commandStarted(pid: pid)
                }
            }
            do {
                let ended = try client.runToCompletion()
                capture?.commandEnded()
                outcome = ended
                say("client command: \(ended.status); waiting for open verdicts to settle")
            } catch {
                console.err("mitm-proxy: \(error)")
                server.stop()
                return ExitStatus.usageOrSetup
            }
            _ = waitBlocking { await server.settleVerdicts() }
        }
        server.stop()
        if server.droppedEventCount > 0 {
            console.err(
                "warning: \(server.droppedEventCount) events were dropped: the recording outputs (console, --events, --har, web UI) "
                    + "took nothing for 2 s while events waited (a pipe nobody reads, or a terminal paused with Ctrl-S), so those records are "
                    + "missing from --events and --har (the HAR and --report say how many); the verdicts, counts and expectations are complete"
            )
        }
        har?.finish(droppedEvents: server.droppedEventCount)
        let final =
            report?.writeFinal(clientCommand: outcome)
            ?? server.report(expectations: expectations, final: true, clientCommand: outcome)
        let summary = VerdictText.table(final.hosts, expectations: final.expectations, client: outcome)
        say(summary)
        for tally in server.ruleTallies {
            say(
                "rule \"\(tally.rule)\" acted \(tally.fired) time\(tally.fired == 1 ? "" : "s") (last: \(tally.lastAction))"
            )
        }
        if final.connectionsOmitted > 0, let path = options.reportPath {
            say(
                "(\(path) lists the last \(final.connections.count) connections in detail and counts \(final.connectionsOmitted) more; "
                    + "--events has every one)")
        }
        if let path = options.junitPath {
            do {
                try Data(JUnitReport(run: final, startedAt: startedAt, summary: summary).xml.utf8).write(
                    to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                console.err("mitm-proxy: cannot write --junit \(path): \(error.localizedDescription)")
                return ExitStatus.usageOrSetup
            }
        }
        let status = ExitStatus.of(final)
        if status == ExitStatus.clientCommandFailed { say("mitm-proxy exits \(status): the client command failed") }
        return status
    }
}
