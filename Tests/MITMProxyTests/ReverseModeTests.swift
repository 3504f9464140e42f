import Foundation
import MITMCore
import MITMProxy
import Testing

/// `--reverse`: the proxy as a TLS server in front of one origin, reached by a base URL (`https://localhost:PORT`) or a
/// hosts-file entry, with the same forging, verdicts and recording as a proxied tunnel.
@Suite(.tags(.live), .skippedInFastTier) struct ReverseModeTests {
    private func start(_ origin: OriginServer) async throws -> (ProxyHarness, port: Int) {
        let target = try ReverseTarget(parsing: "https://origin.test:\(origin.port)")
        let proxy = try await ProxyHarness.start {
            $0.resolveOverrides = ["origin.test": "127.0.0.1"]
            $0.reverseTargets = [target]
        }
        let port = try #require(proxy.server.reversePorts.first?.port)
        return (proxy, port)
    }

    private func curl(_ proxy: ProxyHarness, _ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(
            "curl", ["-sS", "--max-time", "20", "--noproxy", "*", "--cacert", proxy.caCertificate] + arguments,
            timeout: .seconds(30))
    }

    @Test func aBaseURLAndAHostsFileEntryBothReachTheOriginIntercepted() async throws {
        let origin = try await OriginServer.start()
        let (proxy, port) = try await start(origin)
        defer { proxy.stop() }
        let baseURL = try await curl(proxy, ["https://localhost:\(port)/headers"])
        #expect(baseURL.succeeded, "\(baseURL)")
        let headers = JSON(parsing: baseURL.stdoutText)["headers"].array.compactMap { pair -> String? in
            guard pair[0].string?.lowercased() == "host" else { return nil }
            return pair[1].string
        }
        #expect(
            headers == ["origin.test:\(origin.port)"], "the origin gets its own name in Host: \(baseURL.stdoutText)")
        let hostsFile = try await curl(
            proxy, ["--http2", "--resolve", "origin.test:\(port):127.0.0.1", "https://origin.test:\(port)/hello"])
        #expect(hostsFile.succeeded && hostsFile.stdoutText == "hello from origin", "\(hostsFile)")
        _ = await proxy.server.waitForVerdict(host: "origin.test")
        #expect(proxy.server.verdict(for: "origin.test")?.verdict == .intercepted)
        #expect(
            proxy.server.verdict(for: "localhost") == nil, "the verdict is the origin's, whatever name the client used")
        await origin.stop()
    }

    @Test func aPinningClientIsRefused() async throws {
        let origin = try await OriginServer.start()
        let (proxy, port) = try await start(origin)
        defer { proxy.stop() }
        let pinned = try await curl(
            proxy,
            [
                "--pinnedpubkey", "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                "https://localhost:\(port)/hello",
            ])
        #expect(pinned.status == 90, "\(pinned)")
        _ = await proxy.server.waitForVerdict(host: "origin.test")
        #expect(proxy.server.connectionVerdicts.last?.verdict.kind == .refused)
        await origin.stop()
    }

    @Test(arguments: [
        ("https://api.example.com", "api.example.com", 443, 0, "https://api.example.com"),
        ("9443=https://API.example.com:8443/", "api.example.com", 8443, 9443, "https://api.example.com:8443"),
        ("https://[::1]:8443", "::1", 8443, 0, "https://[::1]:8443"),
    ])
    func targetsParse(text: String, host: String, port: Int, listenPort: Int, url: String) throws {
        let target = try ReverseTarget(parsing: text)
        #expect(target.host == host && target.port == port && target.listenPort == listenPort && target.url == url)
    }

    @Test(arguments: [
        "http://api.example.com", "https://api.example.com/v1", "https://user@api.example.com", "https://bad host",
        "70000=https://api.example.com",
    ])
    func badTargetsSayWhy(text: String) {
        #expect(throws: ReverseTargetError.self) { try ReverseTarget(parsing: text) }
    }
}
