import Foundation
import Testing

/// One run of the `mitm-proxy` binary with `-v`, `--events` and `--har`, whose client command runs ws_client.py
/// scenarios against a WebSocket origin; what the proxy recorded and what each client printed.
struct WebSocketRun {
    /// The lines of the events file, parsed.
    let events: [JSON]
    /// The HAR, parsed (after it validated against the HAR 1.2 schema).
    let har: JSON
    /// The console (`-v`; its lines go to stderr while a client command runs).
    let console: String
    /// Each scenario's JSON, in the order given.
    let clients: [JSON]

    /// Runs `scenarios` (ws_client.py arguments after the connection options) one after the other through a proxy
    /// started with `proxyArguments`, against `origin` named `origin.test`.
    static func run(origin: OriginServer, scenarios: [[String]], proxyArguments: [String] = []) async throws
        -> WebSocketRun
    {
        let pki = try await TestPKI.shared()
        let base = FileManager.default.temporaryDirectory.path + "/mitm-proxy-ws-\(UUID().uuidString)"
        defer {
            for suffix in ["", ".har", ".jsonl"] { try? FileManager.default.removeItem(atPath: base + suffix) }
            for index in scenarios.indices { try? FileManager.default.removeItem(atPath: base + ".client\(index)") }
        }
        let commands = scenarios.enumerated().map { index, arguments in
            ([
                "python3", RepositoryLayout.webSocketClientScript, "--proxy-port", "$MITM_PROXY_PORT", "--host",
                "origin.test",
                "--port", String(origin.port), "--cafile", "$MITM_PROXY_CA",
            ] + arguments).joined(separator: " ")
                + " > \(base).client\(index)"
        }
        let result = try await Subprocess.run(
            RepositoryLayout.builtExecutable,
            [
                "--ca-dir", base, "--upstream-ca", pki.root, "--resolve", "origin.test:127.0.0.1", "-v",
                "--events", base + ".jsonl", "--har", base + ".har",
            ] + proxyArguments + ["--", "/bin/sh", "-c", "set -e; " + commands.joined(separator: "; ")],
            timeout: .seconds(90))
        try #require(result.status == 0, "\(result)")
        _ = try await HARRecordingTests.validated(base + ".har")
        let summary = try await Subprocess.run(RepositoryLayout.builtExecutable, ["har", "summary", base + ".har"])
        try #require(summary.succeeded && summary.stdoutText.contains("origin.test"), "the HAR reader: \(summary)")
        let har = JSON(parsing: try String(contentsOfFile: base + ".har", encoding: .utf8))
        let events = try String(contentsOfFile: base + ".jsonl", encoding: .utf8).split(separator: "\n").map {
            JSON(parsing: String($0))
        }
        let clients = try scenarios.indices.map {
            JSON(parsing: try String(contentsOfFile: base + ".client\($0)", encoding: .utf8))
        }
        return WebSocketRun(events: events, har: har, console: result.stdoutText + result.stderrText, clients: clients)
    }

    /// The `websocket-message` lines of connection `connection`, in order.
    func messages(connection: Int) -> [JSON] {
        events.filter { $0["type"].string == "websocket-message" && $0["connection"].int == connection }
    }

    /// The connection ids of the WebSockets (one `websocket-close` line each), in the order they ended.
    var upgradedConnections: [Int] {
        events.filter { $0["type"].string == "websocket-close" }.compactMap { $0["connection"].int }
    }

    /// The HAR entry of the handshake on connection `connection`.
    func harEntry(connection: Int) -> JSON? {
        har["log"]["entries"].array.first { $0["connection"].string == String(connection) }
    }
}
