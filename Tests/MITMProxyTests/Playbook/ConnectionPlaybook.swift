import Foundation
import MITMCore
import MITMIO
@testable import MITMProxy
import MITMTLS

/// A proxy connection's whole life without a socket: the client and every upstream are memory streams,
/// time is a clock the test moves, and deadlines are enforced when the test sweeps — in the manner of
/// mitmproxy's layer playbooks. Every step runs on the connection's loop and returns once nothing moves.
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
    init(origins: Set<String> = [], localTargets: Set<String> = [], clientHost: String = "127.0.0.1",
         tlsOrigin: (@Sendable (MemoryStream) -> MemoryTLSPeer)? = nil, configure: (inout ProxyConfiguration) -> Void = { _ in }) throws {
        var configuration = ProxyConfiguration()
        configuration.loopCount = 1
        configuration.handshakeTimeout = 10
        configuration.idleTimeout = 60
        configure(&configuration)
        caDirectory = TemporaryDirectory.path("playbook-ca")
        let authority = try CertificateAuthority.loadOrCreate(directory: caDirectory)
        let events = EventFanOut()
        let loop = EventLoop(index: 0, label: "playbook")
        network = MemoryNetwork(loop: loop)
        dialer = MemoryDialer(network: network, origins: origins, localTargets: localTargets, tlsOrigin: tlsOrigin)
        let clock = time.clock
        context = try ProxyContext(configuration: configuration, authority: authority, events: events, dialer: dialer, clock: clock,
                                   loops: EventLoopGroup(loops: [loop]))
        let recorded = recorded
        events.subscribe { recorded.record($0) }
        recorded.flushBeforeReading { events.flush() }
        let (clientEnd, proxyEnd) = network.pair(clientHost.contains(":") ? "[\(clientHost)]:40000" : "\(clientHost):40000", "127.0.0.1:8888")
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
        try? FileManager.default.removeItem(atPath: caDirectory)
    }

    /// Runs `step` on the loop, then waits until every delivery it caused has run.
    @discardableResult
    func run<T>(_ step: () -> T) -> T {
        let result = network.loop.sync(step)
        network.settle()
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

    /// Moves time on by `seconds` and enforces deadlines, as the loop's sweeper does.
    func advance(seconds: Double) {
        time.advance(seconds: seconds)
        let registry = context.registry(for: network.loop)
        run { registry.sweep() }
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
