import Foundation
import MITMCore
import MITMProxy
import Synchronization

/// `--capture` run by `CaptureMachine`: this class performs its actions. The namespace's steps are done before the
/// proxy starts (the proxy binds this machine's end of its link); the runner reports the proxy's listeners and the
/// client command; `end` takes down whatever exists, in reverse, whatever way the run ends. SIGINT and SIGTERM are
/// caught from the start, so the process never dies with the namespace half made.
// @unchecked Sendable: `watcher` is set once, in `make`, before any signal can reach it; the rest is behind mutexes.
final class CaptureSetup: @unchecked Sendable {
    let namespace: CaptureNamespace
    private let machine = Mutex(CaptureMachine())
    private let say: @Sendable (String) -> Void
    /// The proxy, once its listeners run: the ports of the `rules` step, stopped when `listeners` are taken down.
    private let server = Mutex<ProxyServer?>(nil)
    private var watcher: SignalWatcher?

    private init(namespace: CaptureNamespace, say: @escaping @Sendable (String) -> Void) {
        self.namespace = namespace
        self.say = say
    }

    /// Removes the leftovers of crashed runs (said with `say`) and makes this run's namespace; the configuration gets
    /// the transparent listener and the capture's clients.
    static func make(into configuration: inout ProxyConfiguration, say: @escaping @Sendable (String) -> Void)
        throws(CaptureError) -> CaptureSetup
    {
        let setup = CaptureSetup(namespace: try CaptureNamespace.forThisProcess(), say: say)
        setup.watcher = SignalWaiter.forward { [setup] in _ = try? setup.advance(.signal) }
        try setup.advance(.begin)
        let plan = setup.namespace.plan
        configuration.capture = CaptureClients(clientAddress: plan.clientAddress, hostAddress: plan.hostAddress)
        configuration.transparentHost = plan.hostAddress
        configuration.transparentPort = 0
        return setup
    }

    /// The proxy's listeners run: adds the redirect to their ports; returns what to tell the user.
    func listenersStarted(_ proxy: ProxyServer) throws(CaptureError) -> [String] {
        server.withLock { $0 = proxy }
        guard let transparent = proxy.transparentAddress, proxy.captureDNSPort != nil else {
            try advance(.stepFailed(.listeners, reason: "the capture's listeners did not start"))
            throw CaptureError(message: "the capture's listeners did not start")
        }
        try advance(.stepDone(.listeners))
        let plan = namespace.plan
        return [
            "capture: the client command runs in network namespace \(plan.namespace) (address \(plan.clientAddress)); its TCP goes "
                + "to the transparent listener \(transparent) and its DNS is answered by the proxy, so it needs no proxy setting "
                + "(the CA variables are set; it must still trust the CA)",
            "capture: UDP other than DNS is refused in the namespace: QUIC (HTTP/3) clients fall back to TCP",
        ]
    }

    /// The client command runs as `pid` (a signal that came before it is passed on at once).
    func commandStarted(pid: Int32) { try? advance(.commandStarted(pid: pid)) }

    func commandEnded() { try? advance(.commandEnded) }

    /// Takes down whatever exists; nothing the second time.
    func end() { try? advance(.end) }

    /// Feeds `event` and performs the actions, and the events they lead to, until the machine waits for the runner or
    /// the run ended. Throws when setup ended without the command: a step failed, or a signal came.
    private func advance(_ first: CaptureMachine.Event) throws(CaptureError) {
        var events = [first]
        while !events.isEmpty {
            let event = events.removeFirst()
            let actions: [CaptureMachine.Action]
            do {
                actions = try machine.withLock { machine throws(CaptureMachine.ImpossibleEvent) in
                    try machine.handle(event)
                }
            } catch {
                throw CaptureError(message: error.description)
            }
            events += actions.compactMap(perform)
        }
        switch machine.withLock({ $0.outcome }) {
        case .failed(let step, let reason)?:
            throw CaptureError(
                message:
                    "the capture could not set up \(step), so nothing was run and everything made was removed: \(reason)"
            )
        case .interrupted? where first != .end:
            throw CaptureError(
                message:
                    "interrupted while setting up the capture: everything made was removed, and the client command did not run"
            )
        case .completed?, .interrupted?, .abandoned?, nil:
            return
        }
    }

    /// Performs one action; returns the event its result is, or nil when the result comes later (from the runner).
    private func perform(_ action: CaptureMachine.Action) -> CaptureMachine.Event? {
        switch action {
        case .removeLeftovers:
            for name in CaptureNamespace.removeLeftovers() {
                say(
                    "removed the leftovers of a capture that did not end cleanly: network namespace \(name), its link and nftables table"
                )
            }
            return .leftoversRemoved
        case .perform(.listeners), .perform(.command):
            return nil
        case .perform(.rules):
            guard let proxy = server.withLock({ $0 }), let transparent = proxy.transparentAddress,
                let dnsPort = proxy.captureDNSPort
            else {
                return .stepFailed(.rules, reason: "the proxy's capture ports are not known")
            }
            do {
                try namespace.redirect(transparentPort: transparent.port, dnsPort: dnsPort)
                return .stepDone(.rules)
            } catch {
                return .stepFailed(.rules, reason: error.message)
            }
        case .perform(let step):
            do {
                try namespace.perform(step)
                return .stepDone(step)
            } catch {
                return .stepFailed(step, reason: error.message)
            }
        case .signalCommand(let pid):
            kill(pid, SIGTERM)
            return nil
        case .undo(.listeners):
            server.withLock { $0 }?.stop()
            return nil
        case .undo(let step):
            namespace.undo(step)
            return nil
        }
    }
}
