import Foundation
import MITMCore
import MITMProxy
import MITMRules
import Testing

/// The transparent listener: a namespace of the test's own, whose TCP the system redirects to the listener
/// with an nftables `REDIRECT`, reaches an origin through the proxy with no proxy setting; the original destination comes
/// from `SO_ORIGINAL_DST`, the name from the SNI.
@Suite(
    .tags(.live), .skippedInFastTier,
    .enabled(
        if: NetworkNamespace.isAvailable && NFTables.isAvailable,
        "network namespaces and nftables need root, iproute2 and nft"))
struct TransparentListenerTests {
    /// A proxy whose transparent listener is on `address` (this machine's end of `space`'s link), and the table that
    /// redirects the namespace's TCP (of `family`) to the origin's port there to it. The original destination is this
    /// machine's own address, hence `allowLocalTargets`.
    private func redirectedProxy(
        _ space: NetworkNamespace, listening address: String, originPort: UInt16, family: String = "ip",
        _ configure: (inout ProxyConfiguration) -> Void = { _ in }
    ) async throws -> (ProxyHarness, NFTables) {
        let proxy = try await ProxyHarness.start {
            $0.transparentHost = address
            $0.transparentPort = 0
            $0.allowLocalTargets = true
            configure(&$0)
        }
        do {
            let port = try #require(proxy.server.transparentAddress?.port)
            return (
                proxy,
                try await NFTables.redirect(from: space.hostLink, port: Int(originPort), to: port, family: family)
            )
        } catch {
            proxy.stop()
            throw error
        }
    }

    /// curl in `space`, given no proxy, fetches https://origin.test:PORT/hello with origin.test at `address`.
    private func fetchHelloAsOriginTest(
        in space: NetworkNamespace, through proxy: ProxyHarness, at address: String, port: UInt16
    ) async throws {
        let fetched = try await space.run(
            [
                "curl", "-sS", "--max-time", "15", "--noproxy", "*", "--cacert", proxy.caCertificate,
                "--resolve", "origin.test:\(port):\(address)", "https://origin.test:\(port)/hello",
            ],
            timeout: .seconds(25))
        #expect(fetched.succeeded, "\(fetched)")
        #expect(fetched.stdoutText == "hello from origin", "\(fetched)")
    }

    /// The one verdict: origin.test (the SNI's name) at `port`, intercepted, from `client`.
    private func expectInterceptedAsOriginTest(_ proxy: ProxyHarness, port: UInt16, client: String) async {
        let verdict = await proxy.recorder.first { if case .verdict = $0 { true } else { false } }
        guard case .verdict(let record)? = verdict else {
            Issue.record("no verdict: \(proxy.events)")
            return
        }
        #expect(record.host == "origin.test" && record.port == Int(port), "\(record)")
        #expect(record.verdict.kind == .intercepted, "\(record)")
        #expect(record.identity?.address == client, "\(record)")
    }

    @Test func aRedirectedClientIsInterceptedWithItsSNIName() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let origin = try await OriginServer.start(.tls(.origin), host: space.hostAddress)
        let (proxy, table) = try await redirectedProxy(space, listening: space.hostAddress, originPort: origin.port)
        defer {
            table.remove()
            proxy.stop()
        }

        try await fetchHelloAsOriginTest(in: space, through: proxy, at: space.hostAddress, port: origin.port)
        await expectInterceptedAsOriginTest(proxy, port: origin.port, client: space.clientAddress)
        await origin.stop()
    }

    @Test func aRedirectedIPv6ClientIsInterceptedWithItsSNINameAndItsOriginalDestination() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let v6 = try await space.addIPv6()
        // The origin listens on the IPv6 address only: reaching it proves the upstream came from IP6T_SO_ORIGINAL_DST.
        let origin = try await OriginServer.start(.tls(.origin), host: v6.host)
        let (proxy, table) = try await redirectedProxy(
            space, listening: v6.host, originPort: origin.port, family: "ip6")
        defer {
            table.remove()
            proxy.stop()
        }

        try await fetchHelloAsOriginTest(in: space, through: proxy, at: "[\(v6.host)]", port: origin.port)
        let opened = await proxy.recorder.first { if case .connectionOpened = $0 { true } else { false } }
        guard case .connectionOpened(_, let host, let port, _)? = opened else {
            Issue.record("no connection: \(proxy.events)")
            return
        }
        #expect(host == v6.host && port == Int(origin.port), "the tunnel went to \(host):\(port)")
        await expectInterceptedAsOriginTest(proxy, port: origin.port, client: v6.client)
        await origin.stop()
    }

    @Test func aRedirectedPlainHTTPClientIsRelayedAndRecordedUnderItsHostName() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let origin = try await OriginServer.start(.plainHTTP, host: space.hostAddress)
        var debug = RuleActions()
        debug.requestHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "X-Debug", value: "1")], removeNames: [])
        let rule = TrafficRule(name: "debug", pattern: try URLPattern(parsing: "origin.test/headers"), actions: debug)
        let (proxy, table) = try await redirectedProxy(space, listening: space.hostAddress, originPort: origin.port) {
            $0.rules = [rule]
        }
        defer {
            table.remove()
            proxy.stop()
        }
        let directory = try TemporaryDirectory.make("transparent-http")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = TestBytes.random(count: 3 * 1_048_576)
        try Data(body).write(to: URL(fileURLWithPath: directory + "/body"))
        let base = "http://origin.test:\(origin.port)"
        let curl = [
            "curl", "-sS", "--max-time", "20", "--noproxy", "*", "--resolve",
            "origin.test:\(origin.port):\(space.hostAddress)",
        ]

        // One connection: an upload and a download, both whole; the rule for origin.test applies by the Host's name.
        let fetched = try await space.run(
            curl + [
                "--data-binary", "@\(directory)/body", "\(base)/digest", "-o", "\(directory)/digest",
                "--next", "\(base)/bytes/700000", "-o", "\(directory)/bytes",
                "--next", "\(base)/headers", "-o", "\(directory)/headers",
            ], timeout: .seconds(40))
        #expect(fetched.succeeded, "\(fetched)")
        let digest = (try? String(contentsOfFile: directory + "/digest", encoding: .utf8)) ?? ""
        let sha256 = try await OpenSSLDigest.sha256Hex(body)
        #expect(digest.contains("\"length\": \(body.count)") && digest.contains(sha256), "\(digest)")
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: directory + "/bytes"))) ?? Data()
        #expect(bytes.elementsEqual(OriginServer.patternBytes(count: 700_000)), "\(bytes.count) bytes")
        let headers = (try? String(contentsOfFile: directory + "/headers", encoding: .utf8)) ?? ""
        #expect(headers.contains("\"origin.test:\(origin.port)\"") && headers.contains("\"X-Debug\""), "\(headers)")

        // A Host that is no host name names nothing: the exchange is recorded under the address the client went to.
        let hostile = try await space.run(curl + ["-H", "Host: bad name/../x", "\(base)/hello"], timeout: .seconds(25))
        #expect(hostile.stdoutText == "hello from origin", "\(hostile)")

        _ = await Poll.until(timeout: .seconds(10)) { proxy.recorder.exchanges.count >= 4 }
        let exchanges = proxy.recorder.exchanges
        let named = exchanges.filter { $0.host == "origin.test" }
        #expect(
            named.count == 3 && named.allSatisfy { $0.port == Int(origin.port) && $0.scheme == "http" }, "\(exchanges)")
        #expect(
            named.contains {
                $0.url == "\(base)/digest" && $0.requestBodyBytes == body.count && $0.response?.status == 200
            })
        #expect(named.contains { $0.url == "\(base)/headers" && $0.rules == ["debug"] }, "\(named)")
        #expect(
            exchanges.contains {
                $0.host == space.hostAddress && $0.url == "http://\(space.hostAddress):\(origin.port)/hello"
            },
            "\(exchanges)")
        await origin.stop()
    }

    @Test func aConnectionStraightToTheListenerIsRefusedAsNotRedirected() async throws {
        let proxy = try await ProxyHarness.start { $0.transparentPort = 0 }
        defer { proxy.stop() }
        let port = try #require(proxy.server.transparentAddress?.port)
        let direct = try await Subprocess.run(
            "/usr/bin/curl", ["-sS", "--max-time", "10", "--noproxy", "*", "http://127.0.0.1:\(port)/"],
            timeout: .seconds(20))
        #expect(!direct.succeeded, "\(direct)")
        let event = await proxy.recorder.first { if case .badRequest = $0 { true } else { false } }
        guard case .badRequest(_, _, let reason)? = event else {
            Issue.record("no bad-request event: \(proxy.events)")
            return
        }
        #expect(reason.contains("not redirected to it by the system") && reason.contains("REDIRECT"), "\(reason)")
    }
}
