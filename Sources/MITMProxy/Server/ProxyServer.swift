import Dispatch
import Foundation
import MITMCore
import MITMIO
import MITMRecording
import MITMTLS
import Synchronization

/// A mitm-proxy instance in this process, for a test: create it (`forTesting` binds a free port on 127.0.0.1 with a
/// fresh CA), `start()` it, run clients with `clientEnvironment`, wait for their verdicts (`waitForVerdict`,
/// `settleVerdicts`), check expectations (`evaluate`), `stop()` it. Every member may be used from any thread or task.
public final class ProxyServer: Sendable {
    /// The configuration it was created with.
    public let configuration: ProxyConfiguration
    /// The proxy's CA (loaded from, or created in, `configuration.caDirectory`).
    @_spi(CommandLine) public let authority: CertificateAuthority
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
    private let stopped = Atomic<Bool>(false)
    /// The temporary CA directory `forTesting` made, removed when the proxy stops (or is released unstopped).
    private let temporaryCADirectory: String?

    /// A proxy for a test, not started yet: 127.0.0.1, a free port (read `port`), a fresh CA in a new temporary
    /// directory that `stop()` removes. `configure` adjusts the configuration before the proxy is made (for a local
    /// origin: `upstreamCAFiles`, `resolveOverrides`); a `caDirectory` it sets is used instead of the temporary one
    /// and kept. Binds the port and creates the CA before it returns (a few milliseconds).
    /// - Throws: `ProxyStartError` when the configuration is invalid, the CA cannot be made, or a port cannot be bound.
    public static func forTesting(configure: (inout ProxyConfiguration) -> Void = { _ in }) throws(ProxyStartError)
        -> ProxyServer
    {
        var configuration = ProxyConfiguration()
        configuration.port = 0
        let temporary = FileManager.default.temporaryDirectory.path + "/mitm-proxy-ca-" + UUID().uuidString
        configuration.caDirectory = temporary
        configure(&configuration)
        guard configuration.caDirectory == temporary else { return try ProxyServer(configuration: configuration) }
        do {
            return try ProxyServer(configuration: configuration, temporaryCADirectory: temporary)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    /// A proxy with `configuration`, not started yet: loads the CA from `configuration.caDirectory` (creating it on
    /// first use) and binds the listening sockets; `start()` then accepts connections.
    /// - Throws: `ProxyStartError` when the configuration is invalid, the CA cannot be read or made, another proxy
    ///   uses the CA directory, or a port cannot be bound.
    public convenience init(configuration: ProxyConfiguration) throws(ProxyStartError) {
        try self.init(configuration: configuration, temporaryCADirectory: nil)
    }

    private init(configuration: ProxyConfiguration, temporaryCADirectory: String?) throws(ProxyStartError) {
        signal(SIGPIPE, SIG_IGN)
        if let problem = configuration.timeoutProblem { throw ProxyStartError.invalidConfiguration(problem: problem) }
        self.configuration = configuration
        self.temporaryCADirectory = temporaryCADirectory
        do {
            authority = try CertificateAuthority.loadOrCreate(directory: configuration.caDirectory)
            directoryLock = try CADirectoryLock.inUse(directory: configuration.caDirectory)
        } catch {
            throw ProxyStartError.certificateAuthority(directory: configuration.caDirectory, reason: error.message)
        }
        let context = try ProxyContext(configuration: configuration, authority: authority, events: EventFanOut())
        self.context = context
        let book = context.verdicts
        context.events.subscribe(takesRequestEvents: false) { book.observe($0) }
        let findings = FindingsBook(clock: context.clock)
        findingsBook = findings
        let events = context.events
        // A finding goes back through the recording queue, so every subscriber sees it after the event that revealed it.
        context.events.subscribe(takesRequestEvents: false) { event in
            for finding in findings.observe(event) { events.emit(.finding(finding)) }
        }
        let access = configuration.clientAccess
        let admits: @Sendable (SocketAddress) -> Bool = { [events = context.events] peer in
            // This machine's own addresses are this machine, whatever their scope.
            guard access.refusesSomeClients, let reason = access.refusal(forClient: peer.host),
                !LocalTargetGuard.isThisMachine(peer.host)
            else {
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
                events.emit(
                    .ruleFired(
                        RuleFiring(connectionID: 0, host: "-", port: 0, rules: ["--rules \(path)"], action: message)))
            }
        }
        do {
            listener = try Listener(
                host: configuration.host, port: configuration.port, loops: context.loops.loops,
                admits: admits
            ) { descriptor, peer, loop in
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop).start()
            }
        } catch {
            throw ProxyStartError.listen(reason: error.message)
        }
        context.ownListener.set(host: listener.address.host, port: listener.address.port)
        webListener = try Self.webListener(context: context)
        reverseListeners = try configuration.reverseTargets.map { target throws(ProxyStartError) in
            let reverse = try Self.reverseListener(target, context: context, admits: admits)
            context.ownListener.set(host: reverse.address.host, port: reverse.address.port)
            return (target, reverse)
        }
        transparentListener = try Self.transparentListener(context: context)
        if let transparent = transparentListener {
            context.ownListener.set(host: transparent.address.host, port: transparent.address.port)
        }
        dnsResponder = try configuration.capture.map { capture throws(ProxyStartError) in
            try DNSResponder(host: capture.hostAddress, names: context.captured)
        }
        if let web = context.web {
            let listen = listener.address.description
            let caPath = authority.files.certificatePEM
            let book = context.verdicts
            web.showReport {
                VerdictReport(
                    final: false, listen: listen, caCertificate: caPath,
                    silenceWindowSeconds: configuration.silenceWindow.inSeconds,
                    ledger: book.ledger, expectations: configuration.webUI.expectations,
                    allowUnprovenRefusals: configuration.allowUnprovenRefusals,
                    trustPerAddress: configuration.trustPerAddress,
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
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop, webUIOnly: true)
                    .start()
            }
        } catch {
            throw ProxyStartError.webUIListen(reason: error.message)
        }
    }

    /// A TLS server on `--host` in front of `target` (admitting the clients the proxy's port admits).
    private static func reverseListener(
        _ target: ReverseTarget, context: ProxyContext,
        admits: @escaping @Sendable (SocketAddress) -> Bool
    ) throws(ProxyStartError) -> Listener {
        do {
            return try Listener(
                host: context.configuration.host, port: target.listenPort, loops: context.loops.loops,
                admits: admits
            ) { descriptor, peer, loop in
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop, reverseTarget: target)
                    .start()
            }
        } catch {
            throw ProxyStartError.reverseListen(url: target.url, reason: error.message)
        }
    }

    /// The transparent listener, when `transparentPort` asks for one: it admits who the proxy's port admits on its own
    /// address, and a captured command's namespace.
    private static func transparentListener(context: ProxyContext) throws(ProxyStartError) -> Listener? {
        let configuration = context.configuration
        guard let port = configuration.transparentPort else { return nil }
        let access = ClientAccessPolicy(
            listenHost: configuration.transparentHost, allowPublicClients: configuration.allowPublicClients)
        let admits: @Sendable (SocketAddress) -> Bool = { [events = context.events] peer in
            guard access.refusesSomeClients, !context.isCapturedClient(peer.host),
                let reason = access.refusal(forClient: peer.host),
                !LocalTargetGuard.isThisMachine(peer.host)
            else {
                return true
            }
            events.emit(.clientRefused(peer: peer.description, reason: reason))
            return false
        }
        do {
            return try Listener(
                host: configuration.transparentHost, port: port, loops: context.loops.loops, admits: admits
            ) { descriptor, peer, loop in
                let arrival = TransparentArrival(originalDestination: SocketAddress.originalDestination(of: descriptor))
                ProxyConnection(descriptor: descriptor, peer: peer, context: context, loop: loop, transparent: arrival)
                    .start()
            }
        } catch {
            throw .transparentListen(reason: error.message)
        }
    }

    /// Starts accepting connections (on `port`, the web UI's port, the reverse-proxy ports, the transparent port and the
    /// captured command's DNS port); returns at once.
    public func start() {
        transparentListener?.start()
        dnsResponder?.start()
        listener.start()
        webListener?.start()
        for (_, reverse) in reverseListeners { reverse.start() }
    }

    /// Stops accepting, closes every connection and ends every `events` iteration (after the events so far); open
    /// verdicts become `inconclusive`, and connections still waiting for a sibling (see `SpareConnectionJudge`) keep
    /// their refusal. A CA directory `forTesting` made is removed. Waits only for the proxy's own threads to close
    /// their connections (milliseconds). The verdicts, ledger and findings stay readable; calling it again does nothing
    /// more.
    /// Stops everything; once (`--capture` stops it again when it takes its listeners down).
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
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
        context.events.finishAll()
        removeTemporaryCADirectory()
    }

    deinit {
        removeTemporaryCADirectory()
    }

    private func removeTemporaryCADirectory() {
        guard let temporaryCADirectory else { return }
        try? FileManager.default.removeItem(atPath: temporaryCADirectory)
    }

    // MARK: Addresses

    /// The port the proxy listens on (the one picked when the configuration asked for port 0).
    public var port: Int { listener.address.port }

    /// `host:port` the proxy listens on.
    public var listenAddress: String { listener.address.description }

    /// Path of the CA certificate (PEM) clients must trust.
    public var caCertificatePath: String { authority.files.certificatePEM }

    /// What a client run through this proxy on this machine needs in its environment: the proxy URL and the CA
    /// variables, the values the `mitm-proxy` CLI gives a client command. Start a client with
    /// `clientEnvironment.applied(to: ProcessInfo.processInfo.environment)`.
    public var clientEnvironment: ClientEnvironment {
        ClientEnvironment(
            proxyHost: Self.hostForLocalClients(listener.address.host), proxyPort: port,
            caCertificatePath: caCertificatePath, trustBundlePath: trustBundlePath,
            credentials: configuration.proxyCredentials)
    }

    /// The transparent listener's `host:port`, when there is one.
    public var transparentAddress: SocketAddress? { transparentListener?.address }

    /// The port of the captured command's DNS responder, when there is one.
    public var captureDNSPort: Int? { dnsResponder?.address.port }

    /// Tells the proxy the pid of the captured client command (inside its namespace), whose socket tables show which
    /// of the command's processes opened each connection.
    @_spi(CommandLine)
    public func captureCommandStarted(pid: Int32) { context.captured.commandStarted(pid: pid) }

    /// Each reverse-proxied origin (`configuration.reverseTargets`) and the local port in front of it.
    public var reversePorts: [(target: ReverseTarget, port: Int)] {
        reverseListeners.map { ($0.target, $0.listener.address.port) }
    }

    /// Where a browser on this machine opens the web UI (`http://127.0.0.1:8888/`), or nil when it is off.
    public var webUIAddress: String? {
        guard configuration.webUI.enabled else { return nil }
        let address = webListener?.address ?? listener.address
        let host = Self.hostForLocalClients(address.host)
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(address.port)/"
    }

    /// The web UI's own port, when `configuration.webUI.port` gave it one (nil: it shares `port`, or it is off).
    public var webUIPort: Int? { webListener?.address.port }

    /// The address a client on this machine connects to for a listener on `host`: loopback for a wildcard listener.
    private static func hostForLocalClients(_ host: String) -> String {
        LocalAddresses.isUnspecified(host) ? (host.contains(":") ? "::1" : "127.0.0.1") : host
    }

    /// The system's trusted roots plus the proxy CA, written beside the CA once, when a client environment first asks.
    private var trustBundlePath: String {
        trustBundle.withLock { path in
            if let path { return path }
            let written = TrustBundle.write(besides: caCertificatePath)
            path = written
            return written
        }
    }

    // MARK: Events

    /// The proxy's events as they happen (connections, verdicts, exchanges, findings, ...): `for await event in
    /// proxy.events`. Each iteration sees the events from its start on, and ends when the proxy stops or its task is
    /// cancelled.
    public var events: ProxyEvents { ProxyEvents(fanOut: context.events, bufferLimit: context.events.capacity) }

    /// Events dropped so far because a reader fell too far behind (an `events` iteration that stopped reading, a
    /// stalled `--events -` pipe).
    public var droppedEventCount: Int { context.events.droppedCount }

    // MARK: Verdicts

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

    /// Suspends until at least one connection to `host` has a verdict and returns the host's verdict so far (its first
    /// port); nil when `timeout` passes first. A refusal is decided when the client hangs up or the silence window
    /// (`configuration.silenceWindow`) ends, so allow more than that.
    public func waitForVerdict(host: String, timeout: Duration = .seconds(10)) async -> HostVerdict? {
        await context.verdicts.waitForVerdict(host: host, timeout: timeout)
    }

    /// Intercepted connections whose verdict is still open (handshaking, or inside the silence window).
    public var undecidedConnectionCount: Int { context.verdicts.pendingCount }

    /// Suspends until no connection's verdict is open (true), or `timeout` passes (false). The default timeout is
    /// twice the silence window plus a second: a spare connection may wait one more window for its sibling.
    @discardableResult
    public func settleVerdicts(timeout: Duration? = nil) async -> Bool {
        await context.verdicts.settle(timeout: timeout ?? configuration.silenceWindow * 2 + .seconds(1))
    }

    /// Checks expectations against the verdicts so far: one result per expectation, in order. A `refused:`
    /// expectation also needs the same client to have accepted the CA on some host (proof that the refusal is the
    /// pin's doing), unless `configuration.allowUnprovenRefusals`. Settle first (`waitForVerdict`, `settleVerdicts`).
    public func evaluate(_ expectations: [Expectation]) -> [ExpectationResult] {
        let ledger = self.ledger
        return ExpectationCheck(
            expectations, provenClients: ledger.provenClients,
            allowUnprovenRefusals: configuration.allowUnprovenRefusals,
            trustPerAddress: configuration.trustPerAddress, clientLabels: ledger.clientLabels
        ).evaluate(ledger.hostVerdicts)
    }

    /// How often each traffic rule (`configuration.rules`, `rulesFile`) acted so far, in the order they first did.
    public var ruleTallies: [RuleTally] { context.rules.tallied }

    /// Fallbacks after refusals and pin-failure reports seen so far (each also an `.finding` event).
    public var findings: RunFindings { findingsBook.findings }

    /// The run's report as of now, as `mitm-proxy --report` writes it: every host's verdict, `expectations` checked,
    /// the findings, the rules that acted and the events dropped. `final` marks the report of a run that ended;
    /// `clientCommand` is how the run's client command ended, when it had one.
    public func report(
        expectations: [Expectation], final: Bool = false, clientCommand: ClientCommandOutcome? = nil
    ) -> VerdictReport {
        var report = VerdictReport(
            final: final, listen: listenAddress, caCertificate: caCertificatePath,
            silenceWindowSeconds: configuration.silenceWindow.inSeconds, ledger: ledger, expectations: expectations,
            allowUnprovenRefusals: configuration.allowUnprovenRefusals,
            trustPerAddress: configuration.trustPerAddress, clientCommand: clientCommand, findings: findings)
        let rules = ruleTallies
        report.rules = rules.isEmpty ? nil : rules
        let dropped = droppedEventCount
        report.droppedEvents = dropped > 0 ? dropped : nil
        return report
    }

    // MARK: For the command line and the tests

    /// Calls `handler` for every event, in order, on the proxy's recording queue (never on a loop: a slow
    /// handler delays only the recording, and past a bound events are dropped and counted). It cannot be removed.
    /// `takesRequestEvents: false` when `handler` ignores `.request` events: when no subscriber reads them, they are not
    /// built. `endOfBatch` is called on the same queue after each batch of events (those of a few milliseconds), so a
    /// writer can gather a batch's records and write them at once.
    @_spi(CommandLine) @_spi(Testing)
    public func subscribe(
        takesRequestEvents: Bool = true, endOfBatch: (@Sendable () -> Void)? = nil,
        _ handler: @escaping @Sendable (ProxyEvent) -> Void
    ) {
        context.events.subscribe(takesRequestEvents: takesRequestEvents, endOfBatch: endOfBatch, handler)
    }

    /// Blocks until every event emitted so far has reached the subscribers.
    @_spi(CommandLine) @_spi(Testing)
    public func flushEvents() { context.events.flush() }

    /// Blocks until every loop has finished what it is doing now. A client can receive a response's last bytes
    /// while the loop that sent them is still recording the exchange: settle, then `flushEvents()`, to read it.
    /// Not from a loop.
    @_spi(Testing)
    public func settleLoops() {
        for loop in context.loops.loops where !loop.isCurrent { loop.sync {} }
    }

    /// How many leaf certificates were signed so far (one per new name set).
    @_spi(Testing)
    public var forgedCertificateCount: Int { context.forger.forgedCount }

    /// Connections currently open (client connections, including those being set up); blocks while each loop counts.
    @_spi(Testing)
    public var openConnectionCount: Int {
        context.loops.loops.reduce(0) { total, loop in
            total + loop.sync { context.registry(for: loop).count }
        }
    }

    /// Idle upstream connections closed so far because no client took them within the pool's idle time; blocks while
    /// each loop counts.
    @_spi(Testing)
    public var expiredUpstreamCount: Int {
        context.loops.loops.reduce(0) { total, loop in
            total + loop.sync { context.pool(for: loop).expiredCount }
        }
    }
}
