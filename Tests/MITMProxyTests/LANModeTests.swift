import Foundation
import MITMCore
import Testing

/// The proxy on a network address, reached from another machine: a network namespace joined by a veth pair, so the
/// proxy sees a client at an address that is not this machine's. Public addresses are closed at accept unless
/// `allowPublicClients`, and no such client reaches this machine's own services unless `allowLocalTargets`. A client
/// on this machine that connects from one of its own non-loopback addresses is this machine.
@Suite(
    .tags(.live), .skippedInFastTier,
    .enabled(if: NetworkNamespace.isAvailable, "network namespaces need root and iproute2"))
struct LANModeTests {
    /// curl through the proxy at `space.hostAddress`, from the other machine.
    private func curl(from space: NetworkNamespace, _ proxy: ProxyHarness, _ arguments: [String]) async throws
        -> SubprocessResult
    {
        try await space.run(
            ["curl", "-sS", "--max-time", "15", "--proxy", MachineAddresses.url(space.hostAddress, port: proxy.port)]
                + arguments,
            timeout: .seconds(25))
    }

    /// Runs `body` with a namespace of `prefix`, removed afterwards.
    private func withNamespace(_ prefix: String, _ body: (NetworkNamespace) async throws -> Void) async throws {
        let space = try await NetworkNamespace.make(prefix: prefix)
        defer { space.remove() }
        try await body(space)
    }

    @Test func aClientFromAPublicAddressIsClosedAtAcceptUnlessAllowed() async throws {
        try await withNamespace("198.51") { space in try await publicClient(space) }
    }

    private func publicClient(_ space: NetworkNamespace) async throws {
        let address = space.clientAddress
        let closed = try await ProxyHarness.start { $0.host = space.hostAddress }
        defer { closed.stop() }
        let refused = try await curl(from: space, closed, ["http://mitm.proxy/ca.pem"])
        #expect(!refused.succeeded && refused.stdout.isEmpty, "\(refused)")
        let event = await closed.recorder.first { if case .clientRefused = $0 { true } else { false } }
        guard case .clientRefused(let peer, let reason)? = event else {
            Issue.record("no client-refused event: \(closed.events)")
            return
        }
        #expect(PeerAddress.host(of: peer) == address, "\(peer)")
        #expect(reason.hasPrefix("\(address) is a public address; listening on \(space.hostAddress)"), "\(reason)")
        #expect(reason.contains("--allow-public-clients"))
        #expect(await closed.waitUntilIdle(), "nothing was set up for the refused client")

        let open = try await ProxyHarness.start {
            $0.host = space.hostAddress
            $0.allowPublicClients = true
        }
        defer { open.stop() }
        let admitted = try await curl(from: space, open, ["http://mitm.proxy/ca.pem"])
        #expect(admitted.stdoutText == (try String(contentsOfFile: open.caCertificate, encoding: .utf8)), "\(admitted)")
    }

    @Test func aClientFromAPrivateAddressIsAdmitted() async throws {
        try await withNamespace("10.77") { space in try await privateClient(space) }
    }

    private func privateClient(_ space: NetworkNamespace) async throws {
        let proxy = try await ProxyHarness.start { $0.host = space.hostAddress }
        defer { proxy.stop() }
        let page = try await curl(from: space, proxy, ["http://mitm.proxy/ca.pem"])
        #expect(page.stdoutText == (try String(contentsOfFile: proxy.caCertificate, encoding: .utf8)), "\(page)")
        #expect(!proxy.events.contains { if case .clientRefused = $0 { true } else { false } })
    }

    @Test func aClientOnAnotherMachineCannotReachThisMachinesServices() async throws {
        try await withNamespace("10.77") { space in try await cannotReachServices(space) }
    }

    private func cannotReachServices(_ space: NetworkNamespace) async throws {
        let address = space.hostAddress
        let proxy = try await ProxyHarness.start {
            $0.host = address
            $0.allowPublicClients = true
            $0.resolveOverrides = ["db.test": "127.0.0.1"]
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let plain = try await OriginServer.start(.plainHTTP)
        let loopbackPlain = try await curl(from: space, proxy, ["-w", "\n%{http_code}", plain.url("/hello")])
        #expect(loopbackPlain.stdoutText.hasSuffix("403"), "\(loopbackPlain)")
        #expect(
            loopbackPlain.stdoutText.contains("127.0.0.1 port \(plain.port) is on the proxy's own machine"),
            "\(loopbackPlain)")
        #expect(loopbackPlain.stdoutText.contains("--allow-local-targets"), "\(loopbackPlain)")
        for url in [
            plain.url("/hello", hostname: "localhost"), plain.url("/hello", hostname: address),
            "http://127.1:\(plain.port)/hello",
        ] {
            let result = try await curl(from: space, proxy, ["-o", "/dev/null", "-w", "%{http_code}", url])
            #expect(result.stdoutText == "403", "\(url): \(result)")
        }
        for hostname in ["127.0.0.1", "db.test"] {
            let tunnel = try await curl(
                from: space, proxy, ["-v", "--cacert", proxy.caCertificate, origin.url("/hello", hostname: hostname)])
            #expect(
                !tunnel.succeeded && tunnel.stderrText.contains("< HTTP/1.1 403 Forbidden"),
                "CONNECT \(hostname): \(tunnel)")
        }
        let reasons = proxy.events.compactMap { event -> String? in
            if case .badRequest(_, _, let reason) = event { reason } else { nil }
        }
        #expect(
            reasons.contains { $0.hasPrefix("db.test (127.0.0.1) port \(origin.port) is on the proxy's own machine") },
            "\(reasons)")
        #expect(proxy.server.verdict(for: "127.0.0.1") == nil, "a refused CONNECT gets no verdict")
        await origin.stop()
        await plain.stop()
    }

    @Test func allowLocalTargetsLetsAClientOnAnotherMachineThrough() async throws {
        try await withNamespace("10.77") { space in try await localTargetsAllowed(space) }
    }

    private func localTargetsAllowed(_ space: NetworkNamespace) async throws {
        let proxy = try await ProxyHarness.start {
            $0.host = space.hostAddress
            $0.allowPublicClients = true
            $0.allowLocalTargets = true
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let tunnel = try await curl(from: space, proxy, ["--cacert", proxy.caCertificate, origin.url("/hello")])
        #expect(tunnel.stdoutText == "hello from origin", "\(tunnel)")
        #expect(await Poll.until { proxy.server.verdict(for: "127.0.0.1")?.verdict == .intercepted })
        await origin.stop()
    }

    /// Issue 34, item 12: this machine connecting from one of its own non-loopback addresses (a public-scope one here)
    /// is this machine: admitted without --allow-public-clients, its local targets allowed, the web UI open to it.
    @Test func aClientOnThisMachineFromItsOwnAddressIsThisMachine() async throws {
        try await withNamespace("198.51") { space in try await ownAddress(space) }
    }

    private func ownAddress(_ space: NetworkNamespace) async throws {
        let address = space.hostAddress
        let proxy = try await ProxyHarness.start { $0.host = address }
        defer { proxy.stop() }
        let plain = try await OriginServer.start(.plainHTTP)
        let proxyURL = MachineAddresses.url(address, port: proxy.port)
        let local = try await Subprocess.run(
            "curl", ["-sS", "--max-time", "15", "--proxy", proxyURL, plain.url("/hello")], timeout: .seconds(25))
        #expect(local.stdoutText == "hello from origin", "\(local)")
        #expect(!proxy.events.contains { if case .clientRefused = $0 { true } else { false } }, "\(proxy.events)")
        let page = try await Subprocess.run(
            "curl", ["-sS", "--max-time", "15", "-o", "/dev/null", "-w", "%{http_code}", proxyURL + "/"],
            timeout: .seconds(25))
        #expect(page.stdoutText == "200", "the web UI is this machine's: \(page)")
        await plain.stop()
    }
}
