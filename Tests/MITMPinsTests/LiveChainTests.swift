import Foundation
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct LiveChainTests {
    private func request(
        _ port: Int, serverName: String? = "leaf.test", proxy: HostAndPort? = nil, timeout: Double = 10
    ) -> LiveChainRequest {
        LiveChainRequest(
            target: HostAndPort(host: "127.0.0.1", port: port), serverName: serverName, proxy: proxy,
            timeoutSeconds: timeout)
    }

    @Test func fetchesTheServedChainWithoutVerifyingIt() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let server = try await TLSTestServer.standard()
        let chain = try CertificateChain(
            source: "live", certificates: request(server.port).fetch(), served: true, now: Date())
        #expect(chain.elements.map(\.position) == [.leaf, .intermediate])
        #expect(
            chain.elements.map(\.pin) == [
                try await pki.opensslPin("leaf.pem"), try await pki.opensslPin("intermediate.pem"),
            ])
    }

    @Test func sendsTheServerNameAsSNI() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let server = try await TLSTestServer.standard()
        let chain = try request(server.port, serverName: "other.test").fetch()
        #expect(chain.first?.spkiSHA256Base64 == (try await pki.opensslPin("other.pem")))
    }

    @Test func tunnelsThroughAProxyWithConnect() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let server = try await TLSTestServer.standard()
        let proxy = HostAndPort(host: "127.0.0.1", port: server.port)
        let live = LiveChainRequest(target: HostAndPort(host: "other.test", port: 443), proxy: proxy)
        #expect(live.sourceDescription == "other.test:443 via proxy 127.0.0.1:\(server.port)")
        #expect(try live.fetch().first?.spkiSHA256Base64 == (try await pki.opensslPin("other.pem")))
    }

    @Test func proxyRefusalIsNamed() async throws {
        let server = try await TLSTestServer.standard()
        let live = LiveChainRequest(
            target: HostAndPort(host: "refused.test", port: 443),
            proxy: HostAndPort(host: "127.0.0.1", port: server.port))
        #expect(
            throws: PinsError(
                "proxy 127.0.0.1:\(server.port) refused to CONNECT to refused.test:443: \"HTTP/1.1 403 Forbidden\"")
        ) {
            try live.fetch()
        }
    }

    @Test func refusedConnectionIsNamed() throws {
        let socket = try BoundSocket(listening: false)
        #expect(throws: PinsError("could not connect to 127.0.0.1:\(socket.port): connection refused")) {
            try request(socket.port).fetch()
        }
    }

    @Test func silentServerTimesOutInsteadOfHanging() throws {
        let socket = try BoundSocket(listening: true)
        let started = ContinuousClock.now
        let error = try #require(throws: PinsError.self) { try request(socket.port, timeout: 0.3).fetch() }
        #expect(error.message == "127.0.0.1:\(socket.port) did not answer within 0.3 s during the TLS handshake")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func plainTextServerIsNotTLS() throws {
        let server = try TLSTestServer(["plain"])
        let error = try #require(throws: PinsError.self) { try request(server.port).fetch() }
        #expect(error.message.hasPrefix("127.0.0.1:\(server.port) did not complete a TLS handshake"))
        #expect(error.message.contains("plain-text port"))
    }

    @Test func listReportsTheLiveChain() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let server = try await TLSTestServer.standard()
        var options = PinsListOptions()
        options.live = request(server.port)
        let result = PinsTool.list(options)
        #expect(result.exitStatus == 0)
        #expect(result.standardOutput.contains("127.0.0.1:\(server.port) (SNI leaf.test): 2 certificates"))
        #expect(result.standardOutput.contains("SPKI-SHA256-BASE64  \(try await pki.opensslPin("leaf.pem"))"))
        #expect(result.standardOutput.contains("The server did not send its root certificate"))
        options.format = .curl
        #expect(PinsTool.list(options).standardOutput.contains("'https://leaf.test/'"))
    }

    @Test func checkAgainstALiveServerPicksTheDomainItServes() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TLSTestServer.standard()
        var options = PinsCheckOptions(
            configurationPath: try await SampleFiles.instantiate("ats-two-domains.plist", in: directory))
        options.live = request(server.port)
        let result = PinsTool.check(options)
        #expect(result.exitStatus == 0)
        #expect(result.standardOutput.contains("Checking the entry that applies to leaf.test (leaf.test)"))
        #expect(!result.standardOutput.contains("other.test:"))
        options.live = request(server.port, serverName: "other.test")
        let other = PinsTool.check(options)
        #expect(other.exitStatus == 0)
        #expect(other.standardOutput.contains("other.test: MATCH"))
        options.live = request(server.port)
        options.domains = ["other.test"]
        #expect(PinsTool.check(options).exitStatus == 1)
    }

    @Test func rootPinNeedsTheRootFileBesideALiveChain() async throws {
        let directory = try TemporaryDirectory()
        let server = try await TLSTestServer.standard()
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsCheckOptions(
            configurationPath: try await SampleFiles.instantiate("nsc-nested.xml", in: directory))
        options.live = request(server.port)
        let without = PinsTool.check(options)
        #expect(without.exitStatus == 1)
        #expect(without.standardOutput.contains("warning [root-not-in-chain]"))
        options.files = [pki.path("root.pem")]
        let with = PinsTool.check(options)
        #expect(with.exitStatus == 0)
        #expect(with.standardOutput.contains("[2] root  CN=mitm-proxy TEST Public Root – not a trust anchor"))
        #expect(with.standardOutput.contains("matches [2] root"))
    }

    @Test func unreachableHostIsExitTwo() throws {
        let socket = try BoundSocket(listening: false)
        var options = PinsListOptions()
        options.live = request(socket.port)
        let result = PinsTool.list(options)
        #expect(result.exitStatus == 2)
        #expect(result.standardError == "error: could not connect to 127.0.0.1:\(socket.port): connection refused\n")
    }
}
