import ArgumentParser
import Foundation
import MITMCore
@_spi(CommandLine) import MITMProxy
@_spi(CommandLine) import MITMRecording
import MITMRules
import MITMTLS

/// `--ca-dir`, shared by every command that touches the CA.
struct CADirectoryOption: ParsableArguments {
    @Option(
        name: .customLong("ca-dir"),
        help: ArgumentHelp(
            "Directory of the proxy's CA (created on first start, mode 0700).", valueName: "dir"))
    var caDirectory: String = CertificateAuthorityFiles.defaultDirectory
}

/// The options of the running proxy.
struct ProxyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Address to listen on. Use 0.0.0.0 to let a phone on your network connect.", valueName: "address"))
    var host = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "Port to listen on (0 picks a free one). Default 8888, or a free port when running a client command.",
            valueName: "port"))
    var port: Int?

    @Option(
        help: ArgumentHelp(
            "The address and port phones should type as their proxy, when not this machine's own: inside a container, the "
                + "host's address and the published port. The start banner, its QR code and the onboarding page name it.",
            valueName: "host:port"))
    var advertise: String?

    @Flag(
        name: .customLong("allow-public-clients"),
        help: ArgumentHelp(
            "On a network address, also admit clients from public addresses. By default only this machine and private, link-local "
                + "and carrier-grade NAT networks may connect; others are refused at once. Use with --proxy-auth."))
    var allowPublicClients = false

    @Option(
        name: .customLong("proxy-auth"),
        help: ArgumentHelp(
            "Require HTTP Basic proxy authentication with these credentials (407 without them); @FILE reads USER:PASSWORD from a file, "
                + "keeping it out of the process list. Never logged or recorded.",
            valueName: "user:password"))
    var proxyAuth: String?

    @Flag(
        name: .customLong("allow-local-targets"),
        help: ArgumentHelp(
            "Let clients on other machines reach this machine's own addresses and loopback services through the proxy "
                + "(by default they get 403)."))
    var allowLocalTargets = false

    @OptionGroup var ca: CADirectoryOption

    @Option(
        name: .customLong("upstream-ca"),
        help: ArgumentHelp(
            "PEM file of an extra CA to trust for upstream servers (repeatable), besides the system store.",
            valueName: "file"))
    var upstreamCAFiles: [String] = []

    @Flag(
        name: .customLong("upstream-insecure"),
        help: "Do not verify upstream certificates (for throwaway test servers only).")
    var upstreamInsecure = false

    @Option(
        name: .customLong("ignore-hosts"),
        help: ArgumentHelp(
            "Relay TLS tunnels to hosts matching PATTERN untouched: no certificate forged, no verdict (repeatable; e.g. '*.apple.com'). "
                + "@FILE reads one pattern per line (# comments).",
            valueName: "pattern"))
    var ignoreHosts: [String] = []

    @Option(
        help: ArgumentHelp(
            "Stand in front of an HTTPS origin as a TLS server, for clients that take a base URL or a hosts-file entry "
                + "instead of a proxy: https://api.example.com[:port], on a free local port (printed), or LOCALPORT=URL "
                + "(repeatable, one port each).",
            valueName: "url"))
    var reverse: [String] = []

    @Option(
        name: .customLong("transparent-port"),
        help: ArgumentHelp(
            "Also listen here (0 picks a free port) for connections the system redirects to the proxy (nftables or iptables "
                + "REDIRECT; Linux): each goes where it was going, named by its TLS SNI, and is intercepted like a CONNECT. "
                + "README: Transparent mode.",
            valueName: "port"))
    var transparentPort: Int?

    @Option(
        name: .customLong("transparent-host"),
        help: ArgumentHelp(
            "Address of the transparent listener (default 127.0.0.1; a REDIRECT of forwarded traffic arrives at the incoming "
                + "interface's address, so use 0.0.0.0 or that address for a container's or a hotspot's traffic).",
            valueName: "address"))
    var transparentHost = "127.0.0.1"

    @Flag(
        name: .customLong("capture"),
        help: ArgumentHelp(
            "Run the client command (after --) in a network namespace of its own whose TCP goes to the proxy's transparent "
                + "listener and whose DNS the proxy answers: clients that take no proxy setting are intercepted. UDP other "
                + "than DNS is refused there (QUIC falls back to TCP). Linux, root or CAP_NET_ADMIN, iproute2 and nft.")
    )
    var capture = false

    @Option(
        name: .customLong("intercept-hosts"),
        help: ArgumentHelp(
            "Intercept only hosts matching PATTERN; relay every other TLS tunnel untouched, without a verdict (repeatable; @FILE reads "
                + "one pattern per line). With --ignore-hosts too, the most specific pattern decides for a host.",
            valueName: "pattern"))
    var interceptHosts: [String] = []

    @Option(
        name: .customLong("attack"),
        help: ArgumentHelp(
            "Show clients a certificate of PROFILE (every host) or HOST=PROFILE (hosts matching a pattern; the most specific wins); "
                + "repeatable. Profiles: trusted (default), untrusted-root, self-signed, wrong-host, expired, not-yet-valid, same-name-ca, "
                + "leaf-as-ca, no-server-auth, key:FILE (a PEM private key), passthrough. Under an invalid profile, intercepted means "
                + "the client ACCEPTED an INVALID certificate.",
            valueName: "[host=]profile"))
    var attack: [String] = []

    @Option(
        name: .customLong("resolve"),
        help: ArgumentHelp(
            "Connect to ADDRESS whenever a client asks for HOST, on any port (repeatable). curl's HOST:PORT:ADDRESS form is "
                + "accepted too (the port is ignored: every port of HOST goes to ADDRESS).", valueName: "host:address"))
    var resolve: [String] = []

    @Option(
        name: .customLong("handshake-timeout"),
        help: ArgumentHelp("Seconds allowed for connects and TLS handshakes.", valueName: "seconds"))
    var handshakeTimeout: Double = 10

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp("Seconds a silent connection stays open.", valueName: "seconds"))
    var idleTimeout: Double = 60

    @Option(
        name: .customLong("loops"),
        help: ArgumentHelp(
            "Event loops (threads) serving connections (default: one per core but one, at least one, leaving a core to the "
                + "clients under test; this machine: \(ProxyConfiguration.defaultLoopCount)).",
            valueName: "count"))
    var loops: Int?

    @Option(
        name: .customLong("silence-window"),
        help: ArgumentHelp(
            "Seconds after a handshake in which a client that sends nothing and hangs up counts as refused; still silent after it, inconclusive.",
            valueName: "seconds"))
    var silenceWindow: Double = 3

    @Option(
        name: .customLong("expect"),
        help: ArgumentHelp(
            "refused:HOST or intercepted:HOST (HOST may be *.example.com; the most specific pattern decides for a host); repeatable. "
                + "A refusal counts only if the same client accepted the CA elsewhere in the run (a control host, or https://mitm.proxy/). "
                + "Exit 0 when all hold, 1 when one does not.",
            valueName: "outcome:host"))
    var expectations: [String] = []

    @Option(
        name: .customLong("expect-from"),
        help: ArgumentHelp(
            "The app's Info.plist (ATS NSPinnedDomains) or network_security_config.xml: every pinned domain becomes refused:DOMAIN "
                + "(intercepted: where the file switches pinning off, e.g. an expired pin-set); repeatable. An --expect for the same host wins.",
            valueName: "file"))
    var expectFrom: [String] = []

    @Flag(
        name: .customLong("allow-unproven-refusals"),
        help: ArgumentHelp(
            "RISKY: let refused:HOST hold although the client never accepted the proxy's CA in the run, so a missing CA "
                + "passes as pinning. Only for a client that cannot reach any control host."))
    var allowUnprovenRefusals = false

    @Flag(
        name: .customLong("trust-per-address"),
        help: ArgumentHelp(
            "RISKY: let any client of an address prove CA trust for every client of that address (on a CI machine every client "
                + "is 127.0.0.1: a curl health check would vouch for an app that never trusted the CA). By default trust is proven "
                + "per client: address, TLS fingerprint and program."))
    var trustPerAddress = false

    @Flag(
        name: .customLong("identify-processes"),
        help: ArgumentHelp(
            "Name the program (pid, executable) behind each connection from this machine, as with a client command (where it "
                + "is always on). Costs a scan of /proc per connection."))
    var identifyProcesses = false

    @Option(
        name: .customLong("events"),
        help: ArgumentHelp("Write every event as JSON Lines to FILE (- for stdout).", valueName: "file"))
    var eventsPath: String?

    @Option(
        name: .customLong("report"),
        help: ArgumentHelp(
            "Keep a JSON report of verdicts and expectations in FILE (rewritten atomically; final on exit).",
            valueName: "file"))
    var reportPath: String?

    @Option(
        name: .customLong("junit"),
        help: ArgumentHelp(
            "Write JUnit XML to FILE on exit: one test case per expectation (audit: per host and profile), for CI test views.",
            valueName: "file"))
    var junitPath: String?

    @Option(
        name: .customLong("har"),
        help: ArgumentHelp(
            "Record every exchange, and refused or failed TLS connections, into a HAR 1.2 file (complete after Ctrl-C).",
            valueName: "file"))
    var harPath: String?

    @Option(
        name: .customLong("body-limit"),
        help: ArgumentHelp(
            "Bytes of each body and WebSocket message kept in the HAR and the web UI (and of each WebSocket message in --events); larger ones are relayed whole and truncated in the record.",
            valueName: "bytes"))
    var bodyLimit = 1_048_576

    @Flag(
        name: .customLong("redact"),
        help: "Mask Authorization, Proxy-Authorization, Cookie and Set-Cookie values in the HAR (also the web UI's).")
    var redact = false

    @Flag(name: .customLong("no-web"), help: "Do not serve the web UI (and keep no flows in memory for it).")
    var noWeb = false

    @Option(
        name: .customLong("web-port"),
        help: ArgumentHelp(
            "Also serve the web UI on this port (0 picks a free one); it is always at http://127.0.0.1:PORT/ on the proxy's own port.",
            valueName: "port"))
    var webPort: Int?

    @Option(
        name: .customLong("web-host"),
        help: ArgumentHelp(
            "Address of the --web-port listener (default 127.0.0.1). Another address lets other machines open the web UI with "
                + "the token printed at start (--web-token, or a random one).",
            valueName: "address"))
    var webHost: String?

    @Option(
        name: .customLong("web-token"),
        help: ArgumentHelp(
            "Let other machines open the web UI when they present TOKEN (http://ADDRESS:PORT/?token=TOKEN); this machine needs none.",
            valueName: "token"))
    var webToken: String?

    @Flag(
        name: .shortAndLong,
        help: "Only print refusals, failed and inconclusive verdicts, trust probes, problems and the final table.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also print every interception and timeout.")
    var verbose = false

    @OptionGroup(title: "QA rules") var trafficRules: TrafficRuleOptions

    mutating func validate() throws {
        if let port, !(0...65_535).contains(port) {
            throw ValidationError("--port \(port) is not a port number (0-65535)")
        }
        if let transparentPort, !(0...65_535).contains(transparentPort) {
            throw ValidationError("--transparent-port \(transparentPort) is not a port number (0-65535)")
        }
        guard IPAddressText.parse(transparentHost) != nil else {
            throw ValidationError(
                "--transparent-host \(transparentHost) is not an IP address; use 127.0.0.1, 0.0.0.0 or the address traffic is redirected to"
            )
        }
        guard bodyLimit >= 0 else { throw ValidationError("--body-limit must be 0 or more bytes") }
        if let loops, !ProxyConfiguration.loopCountRange.contains(loops) {
            let range = ProxyConfiguration.loopCountRange
            throw ValidationError("--loops \(loops) must be between \(range.lowerBound) and \(range.upperBound)")
        }
        _ = try parsedExpectations()
        guard IPAddressText.parse(host) != nil else {
            throw ValidationError(
                "--host \(host) is not an IP address; use 127.0.0.1 (this machine only) or 0.0.0.0 (all interfaces)")
        }
        _ = try advertisedAddress()
        guard !(quiet && verbose) else { throw ValidationError("--quiet and --verbose cannot be used together") }
        try validateWebOptions()
        if let problem = try makeConfiguration(runsClient: false).timeoutProblem { throw ValidationError(problem) }
        _ = try resolveOverrides()
        _ = try proxyCredentials()
        try HostListCheck(policy: try hostLists(), expectations: try parsedExpectations().expectations).validate()
        for path in try profileRules().compactMap(\.keyFile) {
            do { _ = try CertificateProfileForger.readKey(path) } catch {
                throw ValidationError("--attack \(error.description)")
            }
        }
        for file in upstreamCAFiles where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("--upstream-ca \(file): no readable file there")
        }
    }

    private func validateWebOptions() throws {
        if let webPort, !(0...65_535).contains(webPort) {
            throw ValidationError("--web-port \(webPort) is not a port number (0-65535)")
        }
        if noWeb, webPort != nil || webHost != nil || webToken != nil {
            throw ValidationError(
                "--no-web switches the web UI off; drop it, or drop --web-port, --web-host and --web-token")
        }
        if let webHost {
            guard webPort != nil else {
                throw ValidationError(
                    "--web-host \(webHost) is the address of the web UI's own listener: give --web-port PORT too")
            }
            guard IPAddressText.parse(webHost) != nil else {
                throw ValidationError(
                    "--web-host \(webHost) is not an IP address; use 127.0.0.1 (this machine only) or 0.0.0.0 (all interfaces)"
                )
            }
        }
        if let webToken,
            webToken.count < 8 || webToken.contains(where: { !$0.isASCII || $0.isWhitespace || ";,\"".contains($0) })
        {
            throw ValidationError("--web-token: use at least 8 characters without spaces, quotes, commas or semicolons")
        }
    }

    /// The web UI token: `--web-token`, or a random one when `--web-host` lets other machines connect.
    func webUIToken() -> String? {
        if let webToken { return webToken }
        guard let webHost, !WebAccess.isLoopback(webHost) else { return nil }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        return String((0..<24).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// `--reverse` values, parsed; two on one local port are refused.
    func reverseTargets() throws -> [ReverseTarget] {
        let targets = try reverse.map { text in
            do { return try ReverseTarget(parsing: text) } catch {
                throw ValidationError("--reverse \(text): \(error)")
            }
        }
        let fixed = targets.map(\.listenPort).filter { $0 != 0 }
        if let port = fixed.first(where: { port in fixed.count { $0 == port } > 1 || port == self.port }) {
            throw ValidationError(
                "--reverse: local port \(port) is given twice (each origin needs a port of its own, other than --port)")
        }
        return targets
    }

    /// `--ignore-hosts` and `--intercept-hosts`, read (files included) and parsed.
    func hostLists() throws -> TunnelPolicy {
        TunnelPolicy(
            passThroughHosts: try HostListCheck.patterns(ignoreHosts, flag: "--ignore-hosts"),
            interceptHosts: try HostListCheck.patterns(interceptHosts, flag: "--intercept-hosts"))
    }

    /// `--proxy-auth`, read (from its file with `@FILE`) and parsed; errors never repeat the credentials.
    func proxyCredentials() throws -> ProxyCredentials? {
        guard let proxyAuth else { return nil }
        var text = proxyAuth
        var source = "--proxy-auth"
        if proxyAuth.hasPrefix("@") {
            let path = String(proxyAuth.dropFirst())
            source = "--proxy-auth @\(path)"
            do {
                let data = try FileReading.contents(of: path, what: "--proxy-auth file")
                text =
                    String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
                    ?? ""
            } catch {
                throw ValidationError(error.description)
            }
        }
        do {
            return try ProxyCredentials(parsing: text)
        } catch {
            throw ValidationError("\(source): \(error)")
        }
    }

    /// `--attack` values, parsed.
    func profileRules() throws -> [CertificateProfileRule] {
        try attack.map { text in
            do throws(CertificateProfileError) {
                return try CertificateProfileRule(parsing: text)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    /// `--resolve` entries as host -> address.
    func resolveOverrides() throws -> [String: String] {
        var overrides: [String: String] = [:]
        for entry in resolve {
            guard let colon = entry.firstIndex(of: ":") else {
                throw ValidationError("--resolve \(entry): expected HOST:ADDRESS, e.g. api.example.com:127.0.0.1")
            }
            let host = entry[..<colon].lowercased()
            var address = String(entry[entry.index(after: colon)...])
            // curl's HOST:PORT:ADDRESS: a port, then the address.
            if let portEnd = address.firstIndex(of: ":"), !address.hasPrefix("["), Int(address[..<portEnd]) != nil,
                IPAddressText.parse(address) == nil
            {
                address = String(address[address.index(after: portEnd)...])
            }
            if host.contains("*") {
                throw ValidationError(
                    "--resolve \(entry): wildcards are not supported; name each host (repeat --resolve)")
            }
            if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
            guard !host.isEmpty, IPAddressText.parse(address) != nil else {
                throw ValidationError("--resolve \(entry): \(address) is not an IP address")
            }
            overrides[host] = address
        }
        return overrides
    }

    /// `--advertise`, parsed.
    func advertisedAddress() throws -> AdvertisedAddress? {
        do throws(AdvertisedAddressError) {
            return try advertise.map { text throws(AdvertisedAddressError) in try AdvertisedAddress(parsing: text) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    var verbosity: ConsoleVerbosity { quiet ? .quiet : verbose ? .verbose : .normal }

    /// `--expect` values parsed and `--expect-from` files read, combined.
    func parsedExpectations() throws -> ExpectationInputs {
        try ExpectationInputs(flags: expectations, files: expectFrom)
    }

    /// The `seconds` given to `flag` as a duration; refused outside `ProxyConfiguration.timeoutRange`.
    private static func duration(_ seconds: Double, flag: String) throws -> Duration {
        if let problem = ProxyConfiguration.timeoutProblem(flag, seconds: seconds) { throw ValidationError(problem) }
        return .seconds(seconds)
    }

    func makeConfiguration(runsClient: Bool) throws -> ProxyConfiguration {
        var configuration = ProxyConfiguration()
        configuration.host = host
        configuration.port = port ?? (runsClient ? 0 : 8888)
        configuration.transparentPort = transparentPort
        configuration.transparentHost = transparentHost
        configuration.silenceWindow = try Self.duration(silenceWindow, flag: "--silence-window")
        configuration.bodyCaptureLimit = harPath == nil && noWeb ? 0 : bodyLimit
        // Without a file to record them in or the web UI to show them, WebSocket messages are kept only for the console's previews.
        configuration.webSocketCaptureLimit = harPath == nil && eventsPath == nil && noWeb ? 256 : bodyLimit
        configuration.caDirectory = ca.caDirectory
        configuration.upstreamCAFiles = upstreamCAFiles
        configuration.upstreamInsecure = upstreamInsecure
        configuration.tunnelPolicy = try hostLists()
        configuration.reverseTargets = try reverseTargets()
        configuration.tunnelPolicy.profileRules = try profileRules()
        configuration.resolveOverrides = try resolveOverrides()
        configuration.handshakeTimeout = try Self.duration(handshakeTimeout, flag: "--handshake-timeout")
        configuration.idleTimeout = try Self.duration(idleTimeout, flag: "--idle-timeout")
        if let loops { configuration.loopCount = loops }
        configuration.allowUnprovenRefusals = allowUnprovenRefusals
        configuration.trustPerAddress = trustPerAddress
        configuration.identifyProcesses = identifyProcesses || runsClient
        if runsClient { configuration.clientCommandRoot = getpid() }
        configuration.allowPublicClients = allowPublicClients
        configuration.allowLocalTargets = allowLocalTargets
        configuration.advertised = try advertisedAddress()
        configuration.proxyCredentials = try proxyCredentials()
        configuration.webUI.enabled = !noWeb
        configuration.webUI.port = webPort
        configuration.webUI.host = webHost ?? "127.0.0.1"
        configuration.webUI.redactHAR = redact
        configuration.rules = try trafficRules.rules()
        configuration.rulesFile = trafficRules.absoluteRulesFile
        return configuration
    }
}
