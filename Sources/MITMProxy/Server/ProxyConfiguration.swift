import MITMCore
import MITMIO
import MITMRules
import MITMTLS

/// Everything that shapes a proxy instance; the CLI fills it from flags, tests set it directly.
public struct ProxyConfiguration: Sendable {
    /// Address to listen on (`127.0.0.1` unless told otherwise).
    public var host = "127.0.0.1"
    /// Port to listen on; 0 picks a free port (read it back from `ProxyServer.port`).
    public var port = 8888
    /// The CA directory (created on first start).
    public var caDirectory = CertificateAuthorityFiles.defaultDirectory
    /// Extra PEM files of CAs trusted for upstream certificates, besides the system store.
    public var upstreamCAFiles: [String] = []
    /// Turns off upstream certificate verification.
    public var upstreamInsecure = false
    /// Host name -> IP literal used instead of DNS for upstream connections (curl's `--resolve`).
    public var resolveOverrides: [String: String] = [:]
    /// The time allowed for a TLS handshake or an upstream connect.
    public var handshakeTimeout: Duration = .seconds(10)
    /// How long a connection may stay silent in both directions before it is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// How long an idle upstream connection stays pooled for the next client of its origin (at most `idleTimeout`).
    @_spi(Testing) public var upstreamPoolIdle: Duration = .seconds(15)
    /// How long an intercepted HTTP/1 client may sit between requests before its upstream connection goes back to
    /// the pool (taken again, or reopened, for its next request); zero parks it as soon as each response ends.
    @_spi(Testing) public var upstreamParkDelay: Duration = .milliseconds(500)
    /// The transparent listener's port (`--transparent-port`; 0 picks a free one), for connections the system redirects to
    /// it (nftables or iptables `REDIRECT`); nil: none.
    public var transparentPort: Int?
    /// The transparent listener's address (`--transparent-host`).
    public var transparentHost = "127.0.0.1"
    /// Under `--capture`: the client command's network namespace, whose every connection belongs to the command.
    public var capture: CaptureClients?
    /// Origins the proxy stands in front of as a TLS server, each on a local port of its own (`--reverse`).
    public var reverseTargets: [ReverseTarget] = []
    /// The time after a completed handshake within which a client that sends nothing and closes counts
    /// as `refused/closed-after-handshake`; still silent and open after it, `inconclusive/idle`.
    public var silenceWindow: Duration = .seconds(3)
    /// Bytes of each request and response body kept in `ExchangeRecord` (for HAR); 0 keeps none.
    /// Bodies are always streamed; larger ones are relayed whole and truncated only in the record.
    public var bodyCaptureLimit = 0
    /// Bytes of each WebSocket message kept for the events and the HAR (after inflating); larger messages are
    /// relayed whole and recorded truncated. The console shows the first characters.
    public var webSocketCaptureLimit = 1024
    /// Connection verdicts kept in detail for the report and `connectionVerdicts` (the most recent ones);
    /// per-host counts cover every connection, and the events file has every one in full.
    public var connectionDetailLimit = 500
    /// Lets a `refused:` expectation hold although the client never proved that it trusts the CA.
    public var allowUnprovenRefusals = false
    /// Lets one client of an address prove trust in the CA for every client of that address (the rule before clients
    /// were told apart by TLS fingerprint and process): a curl health check then vouches for a Java app beside it.
    public var trustPerAddress = false
    /// Looks up the process of each client on this machine (pid, executable, command line) when its connection arrives:
    /// a read of the system's socket tables and of every process's descriptors, off the loops. On with a client command.
    public var identifyProcesses = false
    /// With a client command: the pid whose descendants are the command's processes (the proxy itself, which also
    /// adopts the command's orphans).
    public var clientCommandRoot: Int32?
    /// On a network address, also admit clients from public addresses (by default only this machine and private
    /// networks may connect: `ClientAccessPolicy`).
    public var allowPublicClients = false
    /// Credentials every proxy request (CONNECT, absolute-form) must carry as Basic `Proxy-Authorization`; a request
    /// without them is answered `407`. With them set, `Proxy-Authorization` is never recorded.
    public var proxyCredentials: ProxyCredentials?
    /// Lets clients that are not on this machine reach this machine's own addresses (loopback included) through
    /// the proxy; by default such a request is answered `403`.
    public var allowLocalTargets = false
    /// `--advertise`: the address the onboarding page tells a phone to set as its proxy.
    public var advertised: AdvertisedAddress?
    /// Decides per TLS tunnel: intercept (default), pass through untouched, or refuse.
    public var tunnelPolicy = TunnelPolicy()
    /// Number of event loops (default `defaultLoopCount`).
    public var loopCount = Self.defaultLoopCount
    /// One loop per core but one, at least one. A test proxy shares its machine with the clients it tests; measured on
    /// 2 cores (bench/README.md), one loop beside a busy client serves new connections for 13-15% less CPU each and 20%
    /// faster than two loops that compete with the client for the cores.
    public static var defaultLoopCount: Int { max(1, System.coreCount - 1) }
    /// Loop counts `--loops` accepts.
    public static let loopCountRange = 1...256
    /// The web UI (on by default, for this machine only).
    public var webUI = WebUIConfiguration()

    /// Who may connect, from `host` and `allowPublicClients`.
    public var clientAccess: ClientAccessPolicy {
        ClientAccessPolicy(listenHost: host, allowPublicClients: allowPublicClients)
    }
    /// QA rules from the command line (`--map-local`, `--throttle`, ...), applied before the rules file's.
    public var rules: [TrafficRule] = []
    /// A rules file (`--rules`, YAML or JSON), read at start and again whenever it changes.
    public var rulesFile: String?

    /// A configuration with the defaults.
    public init() {}

    /// What a timeout or the silence window may be set to: short enough to be a real bound, long enough for the
    /// engine's timers to keep their precision.
    public static let timeoutRange: ClosedRange<Duration> = .milliseconds(100)...(.seconds(604_800))

    /// Why the timeouts cannot be used, phrased with the CLI's flag names; nil when they can.
    public var timeoutProblem: String? {
        for (flag, value) in [
            ("--handshake-timeout", handshakeTimeout), ("--idle-timeout", idleTimeout),
            ("--silence-window", silenceWindow),
        ] {
            if let problem = Self.timeoutProblem(flag, seconds: value.inSeconds) { return problem }
        }
        return nil
    }

    /// Why `seconds` (given to `flag`) cannot be a timeout or the silence window; nil when it can. Checks a number
    /// from the command line before it becomes a `Duration`, which has no infinity or NaN.
    public static func timeoutProblem(_ flag: String, seconds: Double) -> String? {
        let range = timeoutRange.lowerBound.inSeconds...timeoutRange.upperBound.inSeconds
        guard !range.contains(seconds) else { return nil }
        return "\(flag) \(seconds) must be between \(range.lowerBound) and \(Int(range.upperBound)) seconds (one week)"
    }
}
