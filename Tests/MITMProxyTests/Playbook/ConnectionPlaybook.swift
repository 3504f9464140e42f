import Foundation
import MITMCore
import MITMIO
import MITMRecording
import MITMTLS

@testable import MITMProxy

/// A proxy connection's whole life without a socket: the client and every upstream are memory streams,
/// time is a clock the test moves, and every timer of the engine (deadlines, the silence window, rule delays,
/// throttling, pool expiry) fires as it moves — in the manner of mitmproxy's layer playbooks. Every step runs on
/// the connection's loop and returns once nothing moves.
final class ConnectionPlaybook: @unchecked Sendable {
    // @unchecked Sendable: the streams and peers are only touched on the loop (through `run`).
    let context: ProxyContext
    let network: MemoryNetwork
    let dialer: MemoryDialer
    let time = ManualClock()
    let client: MemoryPeer
    let connection: ProxyConnection
    private let recorded = EventRecorder()
    private let caDirectory: String

    /// `clientHost` is the address the client seems to come from; `localTargets` are origins that stand for the proxy's
    /// own machine (see `MemoryDialer`).
    init(
        origins: Set<String> = [], localTargets: Set<String> = [], clientHost: String = "127.0.0.1",
        tlsOrigin: (@Sendable (MemoryStream) -> MemoryTLSPeer)? = nil,
        configure: (inout ProxyConfiguration) -> Void = { _ in }
    ) throws {
        var configuration = ProxyConfiguration()
        configuration.loopCount = 1
        configuration.handshakeTimeout = .seconds(10)
        configuration.idleTimeout = .seconds(60)
        configure(&configuration)
        caDirectory = TemporaryDirectory.path("playbook-ca")
        let authority = try CertificateAuthority.loadOrCreate(directory: caDirectory)
        let events = EventFanOut()
        let loop = EventLoop(index: 0, label: "playbook")
        network = MemoryNetwork(loop: loop)
        dialer = MemoryDialer(network: network, origins: origins, localTargets: localTargets, tlsOrigin: tlsOrigin)
        let clock = time.clock
        context = try ProxyContext(
            configuration: configuration, authority: authority, events: events, dialer: dialer, clock: clock,
            loops: EventLoopGroup(loops: [loop]))
        let recorded = recorded
        events.subscribe { recorded.record($0) }
        recorded.flushBeforeReading { events.flush() }
        let (clientEnd, proxyEnd) = network.pair(
            clientHost.contains(":") ? "[\(clientHost)]:40000" : "\(clientHost):40000", "127.0.0.1:8888")
        let context = context
        (client, connection) = loop.sync {
            proxyEnd.remoteHost = clientHost
            let connection = ProxyConnection(client: proxyEnd, context: context)
            connection.start()
            return (MemoryPeer(clientEnd), connection)
        }
        network.settle()
    }

    deinit {
        let connection = connection
        let network = network
        network.loop.sync {
            connection.close(reason: "playbook over")
            network.disconnectAll()
        }
        time.disarmAll()
        try? FileManager.default.removeItem(atPath: caDirectory)
    }

    /// Runs `step` on the loop, then waits until every delivery it caused has run, and every timer it armed for now.
    @discardableResult
    func run<T>(_ step: () -> T) -> T {
        let result = network.loop.sync(step)
        network.settle()
        time.fireDue(settle: network.settle)
        return result
    }

    /// The client sends `text`.
    func clientSends(_ text: String) { run { client.send(text) } }

    /// The client half-closes (FIN).
    func clientEnds() { run { client.stream.shutdownWriteAfterFlush() } }

    /// What the client received since the last call.
    func clientReceived() -> String { run { client.takeText() } }

    /// Whether the client's stream saw the proxy's FIN or close.
    var clientSawEnd: Bool { run { client.ended } }

    /// The `index`th upstream connection the proxy opened.
    func origin(_ index: Int) -> MemoryPeer? {
        let connections = dialer.connections
        return index < connections.count ? connections[index] : nil
    }

    /// Moves time on by `seconds`: the timers due on the way fire at their deadlines, the sweeper's included; then
    /// enforces the connection deadlines at the new time, as the sweeper's next tick would.
    func advance(seconds: Double) {
        time.advance(seconds: seconds, settle: network.settle)
        let registry = context.registry(for: network.loop)
        run { registry.sweep() }
    }

    /// Moves time on by exactly `duration`, firing the timers due on the way, and nothing else.
    func advance(by duration: Duration) {
        time.advance(by: duration, settle: network.settle)
    }

    /// CONNECTs to `host:443` and completes a TLS handshake as a client that trusts the proxy CA: the intercepted
    /// client, its handshake done.
    func trustingClient(host: String) throws -> MemoryTLSPeer {
        clientSends("CONNECT \(host):443 HTTP/1.1\r\n\r\n")
        _ = clientReceived()
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [caCertificatePath])
        let tls = try TLSConnection(client: trusting, serverName: host, verifyName: host, alpn: ["http/1.1"])
        return run {
            clientStream.delegate = nil
            return MemoryTLSPeer(clientStream, tls: tls, startsHandshake: true)
        }
    }

    /// The client end as a raw stream (to put TLS on it).
    var clientStream: MemoryStream { client.stream }

    /// The proxy CA's certificate file.
    var caCertificatePath: String { context.authority.files.certificatePEM }

    /// The state of the connection's life, read on the loop.
    var state: ProxyConnection.Life.State { run { connection.life.state } }

    /// Whether the connection has ended.
    var isClosed: Bool { run { connection.isClosed } }

    /// What the connection waits for.
    var timeoutReason: TimeoutReason? { run { connection.life.deadline?.reason } }

    /// Everything the connection reported.
    var events: [ProxyEvent] { recorded.events }
}
