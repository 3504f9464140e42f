import Foundation
import MITMCore
import Testing

/// The transparent listener: a namespace of the test's own, whose TCP the system redirects to the listener
/// with an nftables `REDIRECT`, reaches an origin through the proxy with no proxy setting; the original destination comes
/// from `SO_ORIGINAL_DST`, the name from the SNI.
@Suite(.tags(.live), .skippedInFastTier, .enabled(if: NetworkNamespace.isAvailable && NFTables.isAvailable, "network namespaces and nftables need root, iproute2 and nft"))
struct TransparentListenerTests {
    @Test func aRedirectedClientIsInterceptedWithItsSNIName() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let origin = try await OriginServer.start(.tls(.origin), host: space.hostAddress)
        let proxy = try await ProxyHarness.start {
            $0.transparentHost = space.hostAddress
            $0.transparentPort = 0
            // The original destination is this machine's address on the link.
            $0.allowLocalTargets = true
        }
        defer { proxy.stop() }
        let transparentPort = try #require(proxy.server.transparentAddress?.port)
        let table = try await NFTables.redirect(from: space.hostLink, port: Int(origin.port), to: transparentPort)
        defer { table.remove() }

        let fetched = try await space.run(["curl", "-sS", "--max-time", "15", "--noproxy", "*", "--cacert", proxy.caCertificate,
                                           "--resolve", "origin.test:\(origin.port):\(space.hostAddress)",
                                           "https://origin.test:\(origin.port)/hello"], timeout: .seconds(25))
        #expect(fetched.succeeded, "\(fetched)")
        #expect(fetched.stdoutText.contains("hello"), "\(fetched)")
        let verdict = await proxy.recorder.first { if case .verdict = $0 { true } else { false } }
        guard case .verdict(let record)? = verdict else {
            Issue.record("no verdict: \(proxy.events)")
            return
        }
        #expect(record.host == "origin.test" && record.port == Int(origin.port), "\(record)")
        #expect(record.verdict.kind == .intercepted, "\(record)")
        #expect(record.identity?.address == space.clientAddress, "\(record)")
        await origin.stop()
    }

    @Test func aConnectionStraightToTheListenerIsRefusedAsNotRedirected() async throws {
        let proxy = try await ProxyHarness.start { $0.transparentPort = 0 }
        defer { proxy.stop() }
        let port = try #require(proxy.server.transparentAddress?.port)
        let direct = try await Subprocess.run("/usr/bin/curl", ["-sS", "--max-time", "10", "--noproxy", "*", "http://127.0.0.1:\(port)/"],
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
