import Foundation
import MITMCore
import MITMProxy

/// What the HTTP/2 tests ask of the recorded events.
extension EventRecorder {
    /// Reasons of `badRequest` events (what the proxy logged about clients).
    var badRequests: [String] {
        events.compactMap { if case .badRequest(_, _, let reason) = $0 { return reason } else { return nil } }
    }

    /// Reasons of `upstreamFailed` events.
    var upstreamFailures: [String] {
        events.compactMap { if case .upstreamFailed(_, _, _, let reason) = $0 { return reason } else { return nil } }
    }

    /// ALPN of every intercepted client connection.
    var interceptedALPN: [String?] {
        events.compactMap { if case .intercepted(_, _, _, _, let alpn) = $0 { return .some(alpn) } else { return nil } }
    }

    /// How many CONNECT tunnels clients opened.
    var tunnelsOpened: Int {
        events.filter { if case .connectionOpened = $0 { return true } else { return false } }.count
    }

    /// The last exchange whose URL ends with `path`.
    func exchange(endingWith path: String) -> ExchangeRecord? {
        exchanges.last { $0.url.hasSuffix(path) }
    }
}

/// A proxy started in-process (``ProxyHarness``) in front of a test origin, with the clients the HTTP/2
/// tests drive through it: curl, and h2_client.py for what curl cannot do.
struct HTTP2Harness {
    /// Which origin to start.
    enum Origin {
        /// h2_origin.py (ALPN h2 only) with `leaf`'s certificate, advertising this many concurrent streams, and
        /// accepting WebSockets over HTTP/2 when `extendedConnect`.
        case h2(maxConcurrentStreams: Int = 100, leaf: TestPKI.Leaf = .origin, extendedConnect: Bool = false)
        /// origin.py (ALPN http/1.1 only).
        case http1
    }

    let harness: ProxyHarness
    let origin: OriginServer
    let pki: TestPKI

    /// The proxy under test.
    var proxy: ProxyServer { harness.server }
    /// Everything it reported.
    var events: EventRecorder { harness.recorder }

    static func start(
        _ kind: Origin = .h2(),
        configure: @escaping @Sendable (inout ProxyConfiguration) -> Void = { _ in }
    ) async throws -> HTTP2Harness {
        let pki = try await TestPKI.shared()
        let origin: OriginServer
        switch kind {
        case .h2(let limit, let leaf, let extendedConnect):
            origin = try await OriginServer.start(
                .tls(leaf), script: RepositoryLayout.h2OriginScript,
                extraArguments: ["--max-concurrent-streams", String(limit)]
                    + (extendedConnect ? ["--extended-connect"] : []))
        case .http1:
            origin = try await OriginServer.start(.tls(.origin))
        }
        let harness = try await ProxyHarness.start { configuration in
            configuration.resolveOverrides = ["origin.test": "127.0.0.1", "pinned.test": "127.0.0.1"]
            configure(&configuration)
        }
        return HTTP2Harness(harness: harness, origin: origin, pki: pki)
    }

    /// `https://origin.test:<port><path>`.
    func url(_ path: String, host: String = "origin.test") -> String { "https://\(host):\(origin.port)\(path)" }

    /// curl's options for going through the proxy and trusting its CA (repeat them after `--next`).
    var curlProxyOptions: [String] {
        ["-sS", "--max-time", "30", "--proxy", harness.url, "--cacert", harness.caCertificate]
    }

    /// Runs curl through the proxy, trusting the proxy's CA.
    func curl(_ arguments: [String]) async throws -> SubprocessResult {
        try await Curl.run(through: harness, arguments)
    }

    /// Runs one h2_client.py scenario through the proxy and returns its JSON (null JSON if it printed none).
    func h2Client(_ scenario: String, _ arguments: [String] = [], timeout: Duration = .seconds(30)) async throws
        -> (JSON, SubprocessResult)
    {
        try await Self.h2Client(
            proxyPort: harness.port, caFile: harness.caCertificate, originPort: origin.port, scenario, arguments,
            timeout: timeout)
    }

    /// Runs one h2_client.py scenario through the proxy at `proxyPort` (trusting `caFile`) to origin.test at `originPort`.
    static func h2Client(
        proxyPort: Int, caFile: String, originPort: UInt16, _ scenario: String, _ arguments: [String] = [],
        timeout: Duration = .seconds(30)
    ) async throws -> (JSON, SubprocessResult) {
        let result = try await Subprocess.run(
            "python3",
            [
                RepositoryLayout.h2ClientScript, "--proxy-port", String(proxyPort), "--host", "origin.test",
                "--port", String(originPort), "--cafile", caFile, scenario,
            ] + arguments, timeout: timeout)
        return (JSON(parsing: result.stdoutText), result)
    }

    /// Waits until the proxy has no connection open (false if `timeout` passes first).
    func connectionsClosed(timeout: Duration = .seconds(10)) async -> Bool {
        await harness.waitUntilIdle(timeout: timeout)
    }

    func stop() async {
        harness.stop()
        await origin.stop()
    }
}
