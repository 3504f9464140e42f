import Dispatch
import Foundation
import MITMCore
import MITMIO
import MITMTLS
import Synchronization

/// A running mitm-proxy instance, embeddable in tests: start it on port 0, read `port` and
/// `caCertificatePath`, subscribe to events, stop it.
public final class ProxyServer: Sendable {
    /// The configuration it was started with.
    public let configuration: ProxyConfiguration
    /// The proxy's CA.
    public let authority: CertificateAuthority
    private let context: ProxyContext
    private let findingsBook: FindingsBook
    private let listener: Listener
    private let webListener: Listener?
    /// A listener per `--reverse` origin.
    private let reverseListeners: [(target: ReverseTarget, listener: Listener)]
    /// The listener for connections the system redirects to the proxy (`transparentPort`).
    private let transparentListener: Listener?
    /// Under `--capture`: answers the command's DNS questions.
    private let dnsResponder: DNSResponder?
    private let directoryLock: CADirectoryLock
    private let trustBundle = Mutex<String?>(nil)

    /// A proxy for a test: port 0, a fresh temporary CA directory, 127.0.0.1. Call `start()`.
    public static func forTesting(configure: (inout ProxyConfiguration) -> Void = { _ in }) throws(ProxyStartError) -> ProxyServer {
        var configuration = ProxyConfiguration()
        configuration.port = 0
        configuration.caDirectory = FileManager.default.temporaryDirectory.path + "/mitm-proxy-ca-" + UUID().uuidString
        configure(&configuration)
        return try ProxyServer(configuration: configuration)
    }

    /// Loads (or creates) the CA and binds the listening socket; call `start()` to accept connections.
    public init(configuration: ProxyConfiguration) throws(ProxyStartError) {
        signal(SIGPIPE, SIG_IGN)
        if let problem = configuration.timeoutProblem { throw ProxyStartError(problem) }
        self.configuration = configuration
        do {
            authority = try CertificateAuthority.loadOrCreate(directory: configuration.caDirectory)
            directoryLock = try CADirectoryLock.inUse(directory: configuration.caDirectory)
        } catch {
            throw ProxyStartError(error.message)
        }
        let context = try ProxyContext(configuration: configuration, authority: authority, events: EventFanOut())
        self.context = context
        let book = context.verdicts
        context.events.subscribe(takesRequestEvents: false) { book.observe($0) }
        let findings = FindingsBook()
        findingsBook = findings
        let events = context.events
        // A finding goes back through the recording queue, so every subscriber sees it after the event that revealed it.
        context.events.subscribe(takesRequestEvents: false) { event in
            for finding in findings.observe(event) { events.emit(.finding(finding)) }
        }
        let access = configuration.clientAccess
        let admits: @Sendable (SocketAddress) -> Bool = { [events = context.events] peer in
            // This machine's own addresses are this machine, whatever their scope.
            guard access.refusesSomeClients, let reason = access.refusal(forClient: peer.host), !LocalTargetGuard.isThisMachine(peer.host) else {
                return true
            }
            events.emit(.clientRefused(peer: peer.description, reason: reason))
            return false
        }
        let rules = context.rules
        context.events.subscribe(takesRequestEvents: false) { event in
            if case .ruleFired(let firing) = event, firing.connectionID != 0 { rules.tally(firing) }
        }
        if let path = configuration.rulesFile {
            rules.watch { message, _ in
                events.emit(.ruleFired(RuleFiring(connectionID: 0, host: "-", port: 0, rules: ["--rules \(path)"], action: message)))
            }
        }
        do {
            listener = try Listener(host: configuration.host, port: configuration.port, loops: context.loops.loops,
                                    admits: admits) { descriptor, peer, loop in
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop).start()
            }
        } catch {
            throw ProxyStartError(error.message)
        }
        context.ownListener.set(host: listener.address.host, port: listener.address.port)
        webListener = try Self.webListener(context: context)
        reverseListeners = try configuration.reverseTargets.map { target throws(ProxyStartError) in
            let reverse = try Self.reverseListener(target, context: context, admits: admits)
            context.ownListener.set(host: reverse.address.host, port: reverse.address.port)
            return (target, reverse)
        }
        transparentListener = try Self.transparentListener(context: context)
        if let transparent = transparentListener { context.ownListener.set(host: transparent.address.host, port: transparent.address.port) }
        dnsResponder = try configuration.capture.map { capture throws(ProxyStartError) in
            try DNSResponder(host: capture.hostAddress, names: context.captured)
        }
        if let web = context.web {
            let listen = listener.address.description
            let caPath = authority.files.certificatePEM
            let book = context.verdicts
            web.showReport {
                VerdictReport(final: false, listen: listen, caCertificate: caPath, silenceWindowSeconds: configuration.silenceWindow,
                              ledger: book.ledger, expectations: configuration.webUI.expectations,
                              allowUnprovenRefusals: configuration.allowUnprovenRefusals, trustPerAddress: configuration.trustPerAddress,
                              findings: findings.findings)
            }
        }
    }

    /// The web UI's own listener, when `webUI.port` asks for one.
    private static func webListener(context: ProxyContext) throws(ProxyStartError) -> Listener? {
        let web = context.configuration.webUI
        guard web.enabled, let port = web.port else { return nil }
        do {
            return try Listener(host: web.host, port: port, loops: context.loops.loops) { descriptor, peer, loop in
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop, webUIOnly: true).start()
            }
        } catch {
            throw ProxyStartError("web UI: \(error.message)")
        }
    }

    /// A TLS server on `--host` in front of `target` (admitting the clients the proxy's port admits).
    private static func reverseListener(_ target: ReverseTarget, context: ProxyContext,
                                        admits: @escaping @Sendable (SocketAddress) -> Bool) throws(ProxyStartError) -> Listener {
        do {
            return try Listener(host: context.configuration.host, port: target.listenPort, loops: context.loops.loops,
                                admits: admits) { descriptor, peer, loop in
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop, reverseTarget: target).start()
            }
        } catch {
            throw ProxyStartError("--reverse \(target.url): \(error.message)")
        }
    }

    /// The transparent listener, when `transparentPort` asks for one: it admits who the proxy's port admits on its own
    /// address, and a captured command's namespace.
    private static func transparentListener(context: ProxyContext) throws(ProxyStartError) -> Listener? {
        let configuration = context.configuration
        guard let port = configuration.transparentPort else { return nil }
        let access = ClientAccessPolicy(listenHost: configuration.transparentHost, allowPublicClients: configuration.allowPublicClients)
        let admits: @Sendable (SocketAddress) -> Bool = { [events = context.events] peer in
            guard access.refusesSomeClients, !context.isCapturedClient(peer.host), let reason = access.refusal(forClient: peer.host),
                  !LocalTargetGuard.isThisMachine(peer.host) else {
                return true
            }
            events.emit(.clientRefused(peer: peer.description, reason: reason))
            return false
        }
        do {
            return try Listener(host: configuration.transparentHost, port: port, loops: context.loops.loops, admits: admits) { descriptor, peer, loop in
                let arrival = TransparentArrival(originalDestination: SocketAddress.originalDestination(of: descriptor))
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop, transparent: arrival).start()
            }
        } catch {
            throw ProxyStartError("--transparent-port: \(error.message)")
        }
    }

    /// Starts accepting connections.
    public func start() {
        transparentListener?.start()
        dnsResponder?.start()
        listener.start()
        webListener?.start()
        for (_, reverse) in reverseListeners { reverse.start() }
    }

    /// The transparent listener's `host:port`, when there is one.
    public var transparentAddress: SocketAddress? { transparentListener?.address }

    /// The port of the captured command's DNS responder, when there is one.
    public var captureDNSPort: Int? { dnsResponder?.address.port }

    /// Tells the proxy the pid of the captured client command (inside its namespace), whose socket tables show which
    /// of the command's processes opened each connection.
    public func captureCommandStarted(pid: Int32) { context.captured.commandStarted(pid: pid) }

    /// Each `--reverse` origin and the local port in front of it.
    public var reversePorts: [(target: ReverseTarget, port: Int)] { reverseListeners.map { ($0.target, $0.listener.address.port) } }

    /// Where a browser on this machine opens the web UI (`http://127.0.0.1:8888/`), or nil when it is off.
    public var webUIAddress: String? {
        guard configuration.webUI.enabled else { return nil }
        let address = webListener?.address ?? listener.address
        let host = Self.hostForLocalClients(address.host)
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(address.port)/"
    }

    /// What a client run through this proxy on this machine needs in its environment: the proxy URL and the CA
    /// variables, the values the `mitm-proxy` CLI gives a client command. Start a client with
    /// `clientEnvironment.applied(to: ProcessInfo.processInfo.environment)`.
    public var clientEnvironment: ClientEnvironment {
        ClientEnvironment(proxyHost: Self.hostForLocalClients(listener.address.host), proxyPort: port,
                          caCertificatePath: caCertificatePath, trustBundlePath: trustBundlePath, credentials: configuration.proxyCredentials)
    }

    /// The address a client on this machine connects to for a listener on `host`: loopback for a wildcard listener.
    private static func hostForLocalClients(_ host: String) -> String {
        LocalAddresses.isUnspecified(host) ? (host.contains(":") ? "::1" : "127.0.0.1") : host
    }

    /// The web UI's own port, when it has one.
    public var webUIPort: Int? { webListener?.address.port }

    /// The port the proxy listens on.
    public var port: Int { listener.address.port }

    /// `host:port` the proxy listens on.
    public var listenAddress: String { listener.address.description }

    /// Path of the CA certificate (PEM) clients must trust.
    public var caCertificatePath: String { authority.files.certificatePEM }

    /// The system's trusted roots plus the proxy CA, written beside the CA once, when a client environment first asks.
    private var trustBundlePath: String {
        trustBundle.withLock { path in
            if let path { return path }
            let written = TrustBundle.write(besides: caCertificatePath)
            path = written
            return written
        }
    }

    /// How many leaf certificates were signed so far (one per new name set).
    public var forgedCertificateCount: Int { context.forger.forgedCount }

    /// Calls `handler` for every event, in order, on the proxy's recording queue (never on a loop: a slow
    /// handler delays only the recording, and past a bound events are dropped and counted).
    /// `takesRequestEvents: false` when `handler` ignores `.request` events: when no subscriber reads them, they are not
    /// built.
    public func subscribe(takesRequestEvents: Bool = true, _ handler: @escaping @Sendable (ProxyEvent) -> Void) {
        context.events.subscribe(takesRequestEvents: takesRequestEvents, handler)
    }

    /// Blocks until every event emitted so far has reached the subscribers.
    public func flushEvents() { context.events.flush() }

    /// Blocks until every loop has finished what it is doing now. A client can receive a response's last bytes
    /// while the loop that sent them is still recording the exchange: settle, then `flushEvents()`, to read it.
    /// Not from a loop.
    public func settleLoops() {
        for loop in context.loops.loops where !loop.isCurrent { loop.sync {} }
    }

    /// Events dropped because the subscribers fell too far behind (a stalled `--events -` reader).
    public var droppedEventCount: Int { context.events.droppedCount }

    /// Connections currently open (client connections, including those being set up).
    public var openConnectionCount: Int {
        context.loops.loops.reduce(0) { total, loop in
            total + loop.sync { context.registry(for: loop).count }
        }
    }

    /// Idle upstream connections closed so far because no client took them within the pool's idle time.
    public var expiredUpstreamCount: Int {
        context.loops.loops.reduce(0) { total, loop in
            total + loop.sync { context.pool(for: loop).expiredCount }
        }
    }

    /// The most recent intercepted connections' verdicts (at most `configuration.connectionDetailLimit`),
    /// in the order they were decided.
    public var connectionVerdicts: [ConnectionVerdict] { context.verdicts.connections }

    /// Per host and port verdicts so far (hosts never contacted are absent: see `evaluate` for `unseen`).
    public var hostVerdicts: [HostVerdict] { context.verdicts.hosts }

    /// The whole account so far: per-host aggregates, proven clients, recent connections.
    public var ledger: VerdictLedger { context.verdicts.ledger }

    /// The verdict of `host` so far (its first port), or nil when no connection to it was decided yet.
    public func verdict(for host: String) -> HostVerdict? {
        context.verdicts.ledger.hostVerdicts(named: host.lowercased()).first
    }

    /// Waits until at least one connection to `host` has a verdict; nil after `timeout`.
    public func waitForVerdict(host: String, timeout: Duration = .seconds(10)) async -> HostVerdict? {
        await context.verdicts.waitForVerdict(host: host, timeout: timeout)
    }

    /// How often each QA rule acted so far, in the order they first did.
    public var ruleTallies: [RuleTally] { context.rules.tallied }

    /// Fallbacks after refusals and pin-failure reports seen so far (each also sent to subscribers as `.finding`).
    public var findings: RunFindings { findingsBook.findings }

    /// Intercepted connections whose verdict is still open (handshaking, or inside the silence window).
    public var undecidedConnectionCount: Int { context.verdicts.pendingCount }

    /// Waits (blocking) until no verdict is open, at most `timeout` seconds (default: twice the silence window,
    /// as a spare connection may wait one more window for its sibling, plus a margin). Returns whether everything settled.
    @discardableResult
    public func settleVerdicts(timeout: Double? = nil) -> Bool {
        context.verdicts.settle(timeout: timeout ?? 2 * configuration.silenceWindow + 1)
    }

    /// Checks expectations against the verdicts so far (a `refused:` one needs the same client to have
    /// accepted the CA somewhere, unless `configuration.allowUnprovenRefusals`).
    public func evaluate(_ expectations: [Expectation]) -> [ExpectationResult] {
        let ledger = self.ledger
        return ExpectationCheck(expectations, provenClients: ledger.provenClients, allowUnprovenRefusals: configuration.allowUnprovenRefusals,
                                trustPerAddress: configuration.trustPerAddress, clientLabels: ledger.clientLabels).evaluate(ledger.hostVerdicts)
    }

    /// Stops accepting and closes every connection; open verdicts become `inconclusive`, and connections still
    /// waiting for a sibling (see `SpareConnectionJudge`) keep their refusal.
    public func stop() {
        context.rules.stop()
        listener.close()
        transparentListener?.close()
        dnsResponder?.stop()
        webListener?.close()
        for (_, reverse) in reverseListeners { reverse.close() }
        for loop in context.loops.loops {
            loop.sync {
                context.registry(for: loop).closeAll()
                context.pool(for: loop).closeAll()
            }
        }
        context.spares.flush()
        context.events.flush()
    }
}
