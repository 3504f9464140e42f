import Foundation
import MITMProxy
import Synchronization

/// `--capture`: the namespace made before the proxy starts (the proxy binds this machine's end of its link), the
/// redirect added once the proxy's ports are known, and everything removed when the run ends, whatever way it ends.
struct CaptureSetup {
    let namespace: CaptureNamespace

    /// Removes the leftovers of crashed runs (said with `say`) and makes this run's namespace; the configuration gets
    /// the transparent listener and the capture's clients.
    static func make(into configuration: inout ProxyConfiguration, say: (String) -> Void) throws(CaptureError) -> CaptureSetup {
        if let problem = CaptureNamespace.problem() { throw CaptureError(message: problem) }
        for name in CaptureNamespace.removeLeftovers() {
            say("removed the leftovers of a capture that did not end cleanly: network namespace \(name), its link and nftables table")
        }
        let namespace = try CaptureNamespace.make()
        let plan = namespace.plan
        configuration.capture = CaptureClients(clientAddress: plan.clientAddress, hostAddress: plan.hostAddress)
        configuration.transparentHost = plan.hostAddress
        configuration.transparentPort = 0
        return CaptureSetup(namespace: namespace)
    }

    /// Adds the redirect to the running proxy's ports; returns what to tell the user.
    func redirect(to server: ProxyServer) throws(CaptureError) -> [String] {
        guard let transparent = server.transparentAddress, let dnsPort = server.captureDNSPort else {
            throw CaptureError(message: "the capture's listeners did not start")
        }
        try namespace.redirect(transparentPort: transparent.port, dnsPort: dnsPort)
        let plan = namespace.plan
        return ["capture: the client command runs in network namespace \(plan.namespace) (address \(plan.clientAddress)); its TCP goes "
                + "to the transparent listener \(transparent) and its DNS is answered by the proxy, so it needs no proxy setting "
                + "(the CA variables are set; it must still trust the CA)",
                "capture: UDP other than DNS is refused in the namespace: QUIC (HTTP/3) clients fall back to TCP"]
    }
}

/// SIGINT/SIGTERM caught from the moment the capture exists, so that the process never dies with the namespace in
/// place: a signal before the client command starts ends it as soon as it does (the command's own forwarding takes
/// over from there).
// @unchecked Sendable: `watcher` is set once, in `init`; the rest is atomic.
final class CaptureTermination: @unchecked Sendable {
    private let signalled = Atomic<Bool>(false)
    private let child = Atomic<Int32>(0)
    private var watcher: SignalWatcher?

    init() {
        watcher = SignalWaiter.forward { [self] in
            signalled.store(true, ordering: .sequentiallyConsistent)
            let pid = child.load(ordering: .sequentiallyConsistent)
            if pid > 0 { kill(pid, SIGTERM) }
        }
    }

    /// The client command runs as `pid`.
    func commandStarted(pid: Int32) {
        child.store(pid, ordering: .sequentiallyConsistent)
        if signalled.load(ordering: .sequentiallyConsistent) { kill(pid, SIGTERM) }
    }
}
