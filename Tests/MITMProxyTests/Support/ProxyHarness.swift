import Foundation
import MITMCore
@_spi(Testing) import MITMProxy

/// An in-process proxy for one test: port 0 on 127.0.0.1, a fresh CA in a temporary directory, the test
/// PKI's root trusted for upstreams, every event recorded. Call `stop()` at the end of the test.
final class ProxyHarness: Sendable {
    let server: ProxyServer
    let recorder = EventRecorder()
    /// The temporary CA directory (removed by `stop()`).
    let caDirectory: String

    /// Starts a proxy; `configure` adjusts the configuration first (timeouts, `--resolve`, ...).
    static func start(_ configure: (inout ProxyConfiguration) -> Void = { _ in }) async throws -> ProxyHarness {
        let pki = try await TestPKI.shared()
        var configuration = ProxyConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.caDirectory = TemporaryDirectory.path("proxy-ca")
        configuration.upstreamCAFiles = [pki.root]
        configuration.handshakeTimeout = .seconds(10)
        configuration.idleTimeout = .seconds(30)
        configure(&configuration)
        return try ProxyHarness(configuration: configuration)
    }

    private init(configuration: ProxyConfiguration) throws {
        caDirectory = configuration.caDirectory
        server = try ProxyServer(configuration: configuration)
        let recorder = recorder
        server.subscribe { recorder.record($0) }
        // Weak: the server's subscriber holds the recorder, which must not keep the server (and its loops' threads).
        recorder.flushBeforeReading { [weak server] in
            server?.settleLoops()
            server?.flushEvents()
        }
        server.start()
    }

    /// The port the proxy listens on.
    var port: Int { server.port }
    /// `http://127.0.0.1:PORT`, for `curl --proxy` and friends.
    var url: String { "http://127.0.0.1:\(server.port)" }
    /// The proxy CA certificate (PEM) a trusting client loads.
    var caCertificate: String { server.caCertificatePath }
    /// Everything the proxy reported so far.
    var events: [ProxyEvent] { recorder.events }

    /// Waits until no client connection is open; false when `timeout` passed first.
    func waitUntilIdle(timeout: Duration = .seconds(10)) async -> Bool {
        await Poll.until(timeout: timeout) { server.openConnectionCount == 0 }
    }

    /// Stops the proxy and removes its CA directory.
    func stop() {
        server.stop()
        try? FileManager.default.removeItem(atPath: caDirectory)
    }
}
