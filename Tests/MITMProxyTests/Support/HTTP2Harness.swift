import Foundation
import MITMCore
import MITMProxy
import Synchronization

/// Events a proxy emitted, collected from its loops.
final class EventRecorder: Sendable {
    private let events = Mutex<[ProxyEvent]>([])

    func record(_ event: ProxyEvent) { events.withLock { $0.append(event) } }

    var all: [ProxyEvent] { events.withLock { $0 } }

    var exchanges: [ExchangeRecord] {
        all.compactMap { if case .exchange(let record) = $0 { return record } else { return nil } }
    }

    /// Reasons of `badRequest` events (what the proxy logged about clients).
    var badRequests: [String] {
        all.compactMap { if case .badRequest(_, _, let reason) = $0 { return reason } else { return nil } }
    }

    /// Reasons of `upstreamFailed` events.
    var upstreamFailures: [String] {
        all.compactMap { if case .upstreamFailed(_, _, _, let reason) = $0 { return reason } else { return nil } }
    }

    /// ALPN of every intercepted client connection.
    var interceptedALPN: [String?] {
        all.compactMap { if case .intercepted(_, _, _, _, let alpn) = $0 { return .some(alpn) } else { return nil } }
    }

    /// How many CONNECT tunnels clients opened.
    var tunnelsOpened: Int {
        all.filter { if case .connectionOpened = $0 { return true } else { return false } }.count
    }

    /// The exchange whose URL ends with `path`.
    func exchange(endingWith path: String) -> ExchangeRecord? {
        exchanges.last { $0.url.hasSuffix(path) }
    }
}

/// Parsed JSON, read with subscripts: `json["streams"][0]["status"].int`.
struct JSON: CustomStringConvertible {
    let value: Any?

    init(_ value: Any?) { self.value = value }

    init(parsing text: String) {
        value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    subscript(key: String) -> JSON { JSON((value as? [String: Any])?[key]) }
    subscript(index: Int) -> JSON {
        guard let array = value as? [Any], array.indices.contains(index) else { return JSON(nil) }
        return JSON(array[index])
    }

    var int: Int? { (value as? NSNumber)?.intValue }
    var string: String? { value as? String }
    var bool: Bool? { (value as? NSNumber)?.boolValue }
    var array: [JSON] { (value as? [Any])?.map(JSON.init) ?? [] }
    var isNull: Bool { value == nil || value is NSNull }
    var description: String { String(describing: value ?? "nil") }
}

/// A proxy started in-process in front of a test origin, with the clients the HTTP/2 tests drive
/// through it: curl, and h2_client.py for what curl cannot do.
struct HTTP2Harness {
    /// Which origin to start.
    enum Origin {
        /// h2_origin.py (ALPN h2 only) with `leaf`'s certificate, advertising this many concurrent streams.
        case h2(maxConcurrentStreams: Int = 100, leaf: TestPKI.Leaf = .origin)
        /// origin.py (ALPN http/1.1 only).
        case http1
    }

    let proxy: ProxyServer
    let origin: OriginServer
    let pki: TestPKI
    let events: EventRecorder

    static func start(
        _ kind: Origin = .h2(),
        configure: @Sendable (inout ProxyConfiguration) -> Void = { _ in }
    ) async throws -> HTTP2Harness {
        let pki = try await TestPKI.shared()
        let origin: OriginServer
        switch kind {
        case .h2(let limit, let leaf):
            origin = try await OriginServer.start(.tls(leaf), script: RepositoryLayout.h2OriginScript,
                                                  extraArguments: ["--max-concurrent-streams", String(limit)])
        case .http1:
            origin = try await OriginServer.start(.tls(.origin))
        }
        let root = pki.root
        let proxy = try ProxyServer.forTesting { configuration in
            configuration.upstreamCAFiles = [root]
            configuration.resolveOverrides = ["origin.test": "127.0.0.1", "pinned.test": "127.0.0.1"]
            configure(&configuration)
        }
        let events = EventRecorder()
        proxy.subscribe { event in events.record(event) }
        proxy.start()
        return HTTP2Harness(proxy: proxy, origin: origin, pki: pki, events: events)
    }

    /// `https://origin.test:<port><path>`.
    func url(_ path: String, host: String = "origin.test") -> String { "https://\(host):\(origin.port)\(path)" }

    /// curl's options for going through the proxy and trusting its CA (repeat them after `--next`).
    var curlProxyOptions: [String] {
        ["-sS", "--max-time", "25", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", proxy.caCertificatePath]
    }

    /// Runs curl through the proxy, trusting the proxy's CA.
    func curl(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> SubprocessResult {
        try await Subprocess.run("/usr/bin/curl", curlProxyOptions + arguments, timeout: timeout)
    }

    /// Runs one h2_client.py scenario through the proxy and returns its JSON (null JSON if it printed none).
    func h2Client(_ scenario: String, _ arguments: [String] = []) async throws -> (JSON, SubprocessResult) {
        let result = try await Subprocess.run("python3", [
            RepositoryLayout.h2ClientScript, "--proxy-port", String(proxy.port), "--host", "origin.test",
            "--port", String(origin.port), "--cafile", proxy.caCertificatePath, scenario,
        ] + arguments, timeout: .seconds(30))
        return (JSON(parsing: result.stdoutText), result)
    }

    /// Waits until the proxy has no connection open (polling the count; false if `timeout` passes first).
    func connectionsClosed(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if proxy.openConnectionCount == 0 { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return proxy.openConnectionCount == 0
    }

    func stop() async {
        proxy.stop()
        await origin.stop()
    }
}
