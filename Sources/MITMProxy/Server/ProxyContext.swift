import Foundation
import MITMCore
import MITMIO
import MITMRecording
import MITMTLS
import MITMWebUI
import Synchronization

/// Services shared by every connection of one proxy instance.
final class ProxyContext: Sendable {
    let configuration: ProxyConfiguration
    let authority: CertificateAuthority
    let forger: LeafForger
    let profiles: CertificateProfileForger
    let serverTLS: ServerTLSContext
    let upstreamTLS: ClientTLSContext
    let resolver: NameResolver
    let events: EventFanOut
    let loops: EventLoopGroup
    let registries: [ConnectionRegistry]
    let verdicts: VerdictBook
    let spares: SpareConnectionDesk
    let ownListener = OwnListener()
    /// Under `--capture`: the names the command looked up, and where its sockets are listed.
    let captured = CapturedNames()
    let pools: [UpstreamPool]
    let dialer: any UpstreamDialer
    let clock: ProxyClock
    /// The web UI, unless switched off.
    let web: WebUI?
    let rules: RuleStore
    /// Exchanges paused at breakpoints, for the web UI.
    let breakpoints = BreakpointDesk()
    /// The proxy's own connections that carry the web UI's replays.
    let replays = ReplayTags()
    /// The TLS stacks whose fingerprints are known (`KnownClients.txt`).
    static let knownStacks = KnownClientStacks(
        table: String(decoding: PackageResources.KnownClients_txt, as: UTF8.self))
    private let nextConnectionID = Atomic<Int>(1)
    /// Wrong `--proxy-auth` credentials per client address, shared by every loop.
    let credentialBackoff = Mutex(CredentialBackoff())
    /// What the run learned of each upstream, for the next client's first contact.
    let firstContacts = Mutex(FirstContactMemo())

    init(
        configuration: ProxyConfiguration, authority: CertificateAuthority, events: EventFanOut,
        dialer: any UpstreamDialer = SocketDialer(), clock: ProxyClock = .system,
        loops: EventLoopGroup? = nil
    ) throws(ProxyStartError) {
        self.dialer = dialer
        self.clock = clock
        self.configuration = configuration
        self.authority = authority
        rules = try RuleStore(flagRules: configuration.rules, file: configuration.rulesFile)
        self.events = events
        let verdicts = VerdictBook(detailLimit: configuration.connectionDetailLimit)
        self.verdicts = verdicts
        do {
            forger = try LeafForger(authority: authority)
            serverTLS = try ServerTLSContext()
        } catch {
            throw ProxyStartError.tlsSetup(reason: "\(error)")
        }
        do {
            profiles = try CertificateProfileForger(trusted: forger, keyFiles: configuration.tunnelPolicy.keyFiles)
        } catch {
            throw ProxyStartError.certificateProfiles(reason: error.description)
        }
        for file in configuration.upstreamCAFiles {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ProxyStartError.upstreamCAFile(path: file, reason: "cannot read it (missing or unreadable)")
            }
            do {
                _ = try X509Certificate.certificates(inFileBytes: [UInt8](data))
            } catch {
                throw ProxyStartError.upstreamCAFile(path: file, reason: "\(error)")
            }
        }
        do {
            upstreamTLS = try ClientTLSContext(
                verify: !configuration.upstreamInsecure, extraCAFiles: configuration.upstreamCAFiles)
        } catch {
            throw ProxyStartError.upstreamCAFiles(reason: "\(error)")
        }
        resolver = NameResolver(overrides: configuration.resolveOverrides)
        self.loops = loops ?? EventLoopGroup(count: configuration.loopCount)
        spares = SpareConnectionDesk(
            silenceWindow: configuration.silenceWindow.inSeconds, book: verdicts, clock: clock,
            loop: self.loops.loops[0]
        ) { record in
            verdicts.record(record, replacing: nil)
            events.emit(.verdict(record))
        }
        registries = self.loops.loops.map { ConnectionRegistry(loop: $0, clock: clock) }
        pools = self.loops.loops.map {
            UpstreamPool(
                loop: $0, idleTime: min(configuration.idleTimeout, configuration.upstreamPoolIdle), clock: clock)
        }
        web =
            configuration.webUI.enabled
            ? WebUI(
                configuration: configuration.webUI, isOwnAddress: { LocalTargetGuard.isThisMachine($0) },
                droppedEvents: { events.droppedCount }) : nil
        if let web { events.subscribe(takesRequestEvents: false) { web.observe($0) } }
        web?.link(to: self)
    }

    /// Records a decided client verdict and announces it.
    func publish(_ record: ConnectionVerdict, replacing previous: Verdict?) {
        verdicts.record(record, replacing: previous)
        events.emit(.verdict(record))
    }

    func makeConnectionID() -> Int { nextConnectionID.add(1, ordering: .relaxed).oldValue }

    func registry(for loop: EventLoop) -> ConnectionRegistry { registries[loop.index] }

    func pool(for loop: EventLoop) -> UpstreamPool { pools[loop.index] }
}
