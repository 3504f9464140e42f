import Foundation
import MITMCore
import Testing

/// The transparent listener (issue 38): a namespace of the test's own, whose TCP the system redirects to the listener
/// with an nftables `REDIRECT`, reaches an origin through the proxy with no proxy setting; the original destination comes
/// from `SO_ORIGINAL_DST`, the name from the SNI.
@Suite(.enabled(if: NetworkNamespace.isAvailable && NFTables.isAvailable, "network namespaces and nftables need root, iproute2 and nft"))
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

    @Test func aRedirectedIPv6ClientIsInterceptedWithItsSNINameAndItsOriginalDestination() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let v6 = try await space.addIPv6()
        // The origin listens on the IPv6 address only: reaching it proves the upstream came from IP6T_SO_ORIGINAL_DST.
        let origin = try await OriginServer.start(.tls(.origin), host: v6.host)
        let proxy = try await ProxyHarness.start {
            $0.transparentHost = v6.host
            $0.transparentPort = 0
            $0.allowLocalTargets = true
        }
        defer { proxy.stop() }
        let transparentPort = try #require(proxy.server.transparentAddress?.port)
        let table = try await NFTables.redirect(from: space.hostLink, port: Int(origin.port), to: transparentPort, family: "ip6")
        defer { table.remove() }

        let fetched = try await space.run(["curl", "-sS", "--max-time", "15", "--noproxy", "*", "--cacert", proxy.caCertificate,
                                           "--resolve", "origin.test:\(origin.port):[\(v6.host)]",
                                           "https://origin.test:\(origin.port)/hello"], timeout: .seconds(25))
        #expect(fetched.succeeded, "\(fetched)")
        #expect(fetched.stdoutText == "hello from origin", "\(fetched)")
        let opened = await proxy.recorder.first { if case .connectionOpened = $0 { true } else { false } }
        guard case .connectionOpened(_, let host, let port, _)? = opened else {
            Issue.record("no connection: \(proxy.events)")
            return
        }
        #expect(host == v6.host && port == Int(origin.port), "the tunnel went to \(host):\(port)")
        let verdict = await proxy.recorder.first { if case .verdict = $0 { true } else { false } }
        guard case .verdict(let record)? = verdict else {
            Issue.record("no verdict: \(proxy.events)")
            return
        }
        #expect(record.host == "origin.test" && record.port == Int(origin.port), "\(record)")
        #expect(record.verdict.kind == .intercepted, "\(record)")
        #expect(record.identity?.address == v6.client, "\(record)")
        await origin.stop()
    }

    @Test func aRedirectedPlainHTTPClientIsRelayedAndRecordedUnderItsHostName() async throws {
        let space = try await NetworkNamespace.make(prefix: "10.79")
        defer { space.remove() }
        let origin = try await OriginServer.start(.plainHTTP, host: space.hostAddress)
        var debug = RuleActions()
        debug.requestHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "X-Debug", value: "1")], removeNames: [])
        let proxy = try await ProxyHarness.start {
            $0.transparentHost = space.hostAddress
            $0.transparentPort = 0
            $0.allowLocalTargets = true
            $0.rules = [TrafficRule(name: "debug", pattern: try! URLPattern(parsing: "origin.test/headers"), actions: debug)]
        }
        defer { proxy.stop() }
        let transparentPort = try #require(proxy.server.transparentAddress?.port)
        let table = try await NFTables.redirect(from: space.hostLink, port: Int(origin.port), to: transparentPort)
        defer { table.remove() }
        let directory = try TemporaryDirectory.make("transparent-http")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = TestBytes.random(count: 3 * 1_048_576)
        try Data(body).write(to: URL(fileURLWithPath: directory + "/body"))
        let base = "http://origin.test:\(origin.port)"
        let curl = ["curl", "-sS", "--max-time", "20", "--noproxy", "*", "--resolve", "origin.test:\(origin.port):\(space.hostAddress)"]

        // One connection: an upload and a download, both whole; the rule for origin.test applies by the Host's name.
        let fetched = try await space.run(curl + ["--data-binary", "@\(directory)/body", "\(base)/digest", "-o", "\(directory)/digest",
                                                  "--next", "\(base)/bytes/700000", "-o", "\(directory)/bytes",
                                                  "--next", "\(base)/headers", "-o", "\(directory)/headers"], timeout: .seconds(40))
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
        #expect(named.count == 3 && named.allSatisfy { $0.port == Int(origin.port) && $0.scheme == "http" }, "\(exchanges)")
        #expect(named.contains { $0.url == "\(base)/digest" && $0.requestBodyBytes == body.count && $0.response?.status == 200 })
        #expect(named.contains { $0.url == "\(base)/headers" && $0.rules == ["debug"] }, "\(named)")
        #expect(exchanges.contains { $0.host == space.hostAddress && $0.url == "http://\(space.hostAddress):\(origin.port)/hello" },
                "\(exchanges)")
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
