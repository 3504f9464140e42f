import Foundation
import MITMProxy
import Testing

/// The library's API as a test author sees it with `import MITMProxy` alone: events as an async sequence that
/// ends, verdicts settled by suspending, the temporary CA gone after `stop()`, start errors as typed cases.
@Suite(.tags(.live), .skippedInFastTier) struct ProxyServerAPITests {
    private static func proxyForTheTestOrigin() async throws -> ProxyServer {
        let pki = try await TestPKI.shared()
        let proxy = try ProxyServer.forTesting {
            $0.upstreamCAFiles = [pki.root]
            $0.resolveOverrides = ["api.origin.test": "127.0.0.1"]
            $0.silenceWindow = .milliseconds(500)
        }
        proxy.start()
        return proxy
    }

    private static func curl(through proxy: ProxyServer, _ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "30", "--proxy", proxy.clientEnvironment.proxyURL,
                "--cacert", proxy.caCertificatePath,
            ] + arguments, timeout: .seconds(40))
    }

    @Test func eventsArriveInOrderAndTheIterationEndsWhenTheProxyStops() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let proxy = try await Self.proxyForTheTestOrigin()
        var iterator = proxy.events.makeAsyncIterator()
        #expect(
            try await Self.curl(through: proxy, ["-o", "/dev/null", "https://api.origin.test:\(origin.port)/hello"])
                .succeeded)
        #expect(await proxy.waitForVerdict(host: "api.origin.test")?.verdict == .intercepted)
        proxy.stop()
        var verdicts: [ConnectionVerdict] = []
        var exchanges = 0
        while let event = await iterator.next() {
            if case .verdict(let verdict) = event { verdicts.append(verdict) }
            if case .exchange = event { exchanges += 1 }
        }
        #expect(verdicts.map(\.host) == ["api.origin.test"])
        #expect(exchanges == 1)
        var afterStop = proxy.events.makeAsyncIterator()
        #expect(await afterStop.next() == nil, "an iteration begun after stop() ends at once")
        await origin.stop()
    }

    @Test func cancellingTheIteratingTaskEndsTheIteration() async throws {
        let proxy = try ProxyServer.forTesting()
        proxy.start()
        defer { proxy.stop() }
        let reader = Task {
            var count = 0
            for await _ in proxy.events { count += 1 }
            return count
        }
        reader.cancel()
        #expect(await reader.value == 0)
    }

    @Test func settlingVerdictsSuspendsUntilNoneIsOpen() async throws {
        let origin = try await OriginServer.start(.tls(.origin))
        let proxy = try await Self.proxyForTheTestOrigin()
        defer { proxy.stop() }
        // Trusting only the origin's root, curl refuses the proxy's certificate.
        let pki = try await TestPKI.shared()
        let refused = try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "30", "--proxy", proxy.clientEnvironment.proxyURL, "--cacert",
                pki.root, "https://api.origin.test:\(origin.port)/hello",
            ], timeout: .seconds(40))
        #expect(refused.status == 60, "\(refused)")
        #expect(await proxy.settleVerdicts(timeout: .seconds(10)))
        #expect(proxy.undecidedConnectionCount == 0)
        #expect(proxy.verdict(for: "api.origin.test")?.verdict == .refused)
        await origin.stop()
    }

    @Test func theTemporaryCADirectoryIsRemovedWhenTheProxyStops() throws {
        let proxy = try ProxyServer.forTesting()
        let directory = proxy.configuration.caDirectory
        #expect(FileManager.default.fileExists(atPath: proxy.caCertificatePath))
        proxy.start()
        proxy.stop()
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func aCADirectoryTheTestChoseIsKept() throws {
        let directory = TemporaryDirectory.path("chosen-ca")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let proxy = try ProxyServer.forTesting { $0.caDirectory = directory }
        proxy.stop()
        #expect(FileManager.default.fileExists(atPath: proxy.caCertificatePath))
    }

    @Test func aPortInUseIsATypedErrorInWords() throws {
        let first = try ProxyServer.forTesting()
        defer { first.stop() }
        let taken = first.port
        var secondDirectory: String?
        #expect {
            _ = try ProxyServer.forTesting { configuration in
                configuration.port = taken
                secondDirectory = configuration.caDirectory
            }
        } throws: { error in
            guard let error = error as? ProxyStartError, case .listen = error else { return false }
            return error.description.contains("\(taken)")
        }
        #expect(
            secondDirectory.map { !FileManager.default.fileExists(atPath: $0) } == true,
            "the failed proxy's temporary CA is gone")
    }
}
