import Dispatch
import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// A running mitm-proxy instance, embeddable in tests: start it on port 0, read `port` and
/// `caCertificatePath`, subscribe to events, stop it.
public final class ProxyServer: Sendable {
    /// The configuration it was started with.
    public let configuration: ProxyConfiguration
    /// The proxy's CA.
    public let authority: CertificateAuthority
    private let context: ProxyContext
    private let listener: Listener

    /// Loads (or creates) the CA and binds the listening socket; call `start()` to accept connections.
    public init(configuration: ProxyConfiguration) throws(ProxyStartError) {
        signal(SIGPIPE, SIG_IGN)
        self.configuration = configuration
        do {
            authority = try CertificateAuthority.loadOrCreate(directory: configuration.caDirectory)
        } catch {
            throw ProxyStartError(error.message)
        }
        let context = try ProxyContext(configuration: configuration, authority: authority, events: EventFanOut())
        self.context = context
        do {
            listener = try Listener(host: configuration.host, port: configuration.port) { descriptor, _ in
                let loop = context.loops.next()
                loop.execute {
                    ProxyConnection(descriptor: descriptor, context: context, loop: loop).start()
                }
            }
        } catch {
            throw ProxyStartError(error.message)
        }
    }

    /// Starts accepting connections.
    public func start() { listener.start() }

    /// The port the proxy listens on.
    public var port: Int { listener.address.port }

    /// `host:port` the proxy listens on.
    public var listenAddress: String { listener.address.description }

    /// Path of the CA certificate (PEM) clients must trust.
    public var caCertificatePath: String { authority.files.certificatePEM }

    /// How many leaf certificates were signed so far (one per new name set).
    public var forgedCertificateCount: Int { context.forger.forgedCount }

    /// Calls `handler` for every event, from the proxy's loops (possibly concurrently).
    public func subscribe(_ handler: @escaping @Sendable (ProxyEvent) -> Void) {
        context.events.subscribe(handler)
    }

    /// Connections currently open (client connections, including those being set up).
    public var openConnectionCount: Int {
        context.loops.loops.reduce(0) { total, loop in
            total + loop.queue.sync { context.registry(for: loop).count }
        }
    }

    /// Stops accepting and closes every connection.
    public func stop() {
        listener.close()
        for loop in context.loops.loops {
            loop.queue.sync { context.registry(for: loop).closeAll() }
        }
    }
}
