import Foundation
import MITMCore
import Testing

/// The proxy on a network address, reached from this machine's own non-loopback addresses (the kernel uses the address
/// connected to as the source, so the proxy sees a client that is not on loopback): public addresses are closed at
/// accept unless `allowPublicClients`, and no such client reaches this machine's own services unless `allowLocalTargets`.
@Suite struct LANModeTests {
    private static let publicAddress = MachineAddresses.first(in: [.publicInternet])
    private static let privateAddress = MachineAddresses.first(in: [.privateNetwork, .sharedAddressSpace])
    private static let anyAddress = MachineAddresses.nonLoopback

    /// curl through the proxy at `address`, which is also where the request comes from.
    private func curl(via address: String, _ proxy: ProxyHarness, _ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run("curl", ["-sS", "--max-time", "15", "--proxy", MachineAddresses.url(address, port: proxy.port)] + arguments,
                                 timeout: .seconds(25))
    }

    @Test(.enabled(if: publicAddress != nil, "this machine has no public-scope address to connect from"))
    func aClientFromAPublicAddressIsClosedAtAcceptUnlessAllowed() async throws {
        let address = try #require(Self.publicAddress)
        let closed = try await ProxyHarness.start { $0.host = address }
        defer { closed.stop() }
        let refused = try await curl(via: address, closed, ["http://mitm.proxy/ca.pem"])
        #expect(!refused.succeeded && refused.stdout.isEmpty, "\(refused)")
        let event = await closed.recorder.first { if case .clientRefused = $0 { true } else { false } }
        guard case .clientRefused(let peer, let reason)? = event else {
            Issue.record("no client-refused event: \(closed.events)")
            return
        }
        #expect(PeerAddress.host(of: peer) == address, "\(peer)")
        #expect(reason.hasPrefix("\(address) is a public address; listening on \(address)"), "\(reason)")
        #expect(reason.contains("--allow-public-clients"))
        #expect(await closed.waitUntilIdle(), "nothing was set up for the refused client")

        let open = try await ProxyHarness.start {
            $0.host = address
            $0.allowPublicClients = true
        }
        defer { open.stop() }
        let admitted = try await curl(via: address, open, ["http://mitm.proxy/ca.pem"])
        #expect(admitted.stdoutText == (try String(contentsOfFile: open.caCertificate, encoding: .utf8)), "\(admitted)")
    }

    @Test(.enabled(if: privateAddress != nil, "this machine has no private non-loopback address to connect from"))
    func aClientFromAPrivateAddressIsAdmitted() async throws {
        let address = try #require(Self.privateAddress)
        let proxy = try await ProxyHarness.start { $0.host = address }
        defer { proxy.stop() }
        let page = try await curl(via: address, proxy, ["http://mitm.proxy/ca.pem"])
        #expect(page.stdoutText == (try String(contentsOfFile: proxy.caCertificate, encoding: .utf8)), "\(page)")
        #expect(!proxy.events.contains { if case .clientRefused = $0 { true } else { false } })
    }

    @Test(.enabled(if: anyAddress != nil, "this machine has no non-loopback address to connect from"))
    func aClientOnAnotherMachineCannotReachThisMachinesServices() async throws {
        let address = try #require(Self.anyAddress)
        let proxy = try await ProxyHarness.start {
            $0.host = address
            $0.allowPublicClients = true
            $0.resolveOverrides = ["db.test": "127.0.0.1"]
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let plain = try await OriginServer.start(.plainHTTP)
        let loopbackPlain = try await curl(via: address, proxy, ["-w", "\n%{http_code}", plain.url("/hello")])
        #expect(loopbackPlain.stdoutText.hasSuffix("403"), "\(loopbackPlain)")
        #expect(loopbackPlain.stdoutText.contains("127.0.0.1 port \(plain.port) is on the proxy's own machine"), "\(loopbackPlain)")
        #expect(loopbackPlain.stdoutText.contains("--allow-local-targets"), "\(loopbackPlain)")
        for url in [plain.url("/hello", hostname: "localhost"), plain.url("/hello", hostname: address), "http://127.1:\(plain.port)/hello"] {
            let result = try await curl(via: address, proxy, ["-o", "/dev/null", "-w", "%{http_code}", url])
            #expect(result.stdoutText == "403", "\(url): \(result)")
        }
        for hostname in ["127.0.0.1", "db.test"] {
            let tunnel = try await curl(via: address, proxy, ["-v", "--cacert", proxy.caCertificate, origin.url("/hello", hostname: hostname)])
            #expect(!tunnel.succeeded && tunnel.stderrText.contains("< HTTP/1.1 403 Forbidden"), "CONNECT \(hostname): \(tunnel)")
        }
        let reasons = proxy.events.compactMap { event -> String? in if case .badRequest(_, _, let reason) = event { reason } else { nil } }
        #expect(reasons.contains { $0.hasPrefix("db.test (127.0.0.1) port \(origin.port) is on the proxy's own machine") }, "\(reasons)")
        #expect(proxy.server.verdict(for: "127.0.0.1") == nil, "a refused CONNECT gets no verdict")
        await origin.stop()
        await plain.stop()
    }

    @Test(.enabled(if: anyAddress != nil, "this machine has no non-loopback address to connect from"))
    func allowLocalTargetsLetsAClientOnAnotherMachineThrough() async throws {
        let address = try #require(Self.anyAddress)
        let proxy = try await ProxyHarness.start {
            $0.host = address
            $0.allowPublicClients = true
            $0.allowLocalTargets = true
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let tunnel = try await curl(via: address, proxy, ["--cacert", proxy.caCertificate, origin.url("/hello")])
        #expect(tunnel.stdoutText == "hello from origin", "\(tunnel)")
        #expect(await Poll.until { proxy.server.verdict(for: "127.0.0.1")?.verdict == .intercepted })
        await origin.stop()
    }
}
