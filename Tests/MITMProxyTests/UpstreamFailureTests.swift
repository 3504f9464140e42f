import Foundation
import MITMCore
import Testing

/// When the upstream cannot be reached or trusted, the client gets a 502 whose plain-text body names the
/// host, the port and the reason, and the proxy logs it.
@Suite(.tags(.live), .skippedInFastTier) struct UpstreamFailureTests {
    /// curl's `-w` line after the body: the status code.
    private func statusAndBody(_ result: SubprocessResult) -> (status: String, body: String) {
        let text = result.stdoutText
        guard let split = text.range(of: "\n#status ", options: .backwards) else { return ("none", text) }
        return (String(text[split.upperBound...]), String(text[..<split.lowerBound]))
    }

    private func fetch(through proxy: ProxyHarness, _ url: String, _ extra: [String] = []) async throws -> (
        status: String, body: String
    ) {
        let result = try await Curl.run(through: proxy, extra + ["-w", "\n#status %{http_code}", url])
        return statusAndBody(result)
    }

    @Test func anUntrustedUpstreamCertificateGivesA502NamingTheReason() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.tls(.untrusted))
        let answer = try await fetch(through: proxy, origin.url("/hello", hostname: "localhost"))
        #expect(answer.status == "502")
        #expect(
            answer.body.contains("localhost:\(origin.port)") && answer.body.contains("not trusted")
                && answer.body.contains("self-signed certificate") && answer.body.contains("--upstream-ca"),
            "\(answer.body)")
        let logged = await proxy.recorder.first { if case .upstreamFailed = $0 { true } else { false } }
        #expect(logged?.failureReason?.contains("self-signed certificate") == true, "\(proxy.events)")
    }

    @Test func upstreamInsecureAcceptsAnUntrustedUpstream() async throws {
        let proxy = try await ProxyHarness.start { $0.upstreamInsecure = true }
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.tls(.untrusted))
        let answer = try await fetch(through: proxy, origin.url("/hello", hostname: "localhost"))
        #expect(answer.status == "200" && answer.body == "hello from origin", "\(answer)")
    }

    @Test func withoutTheTestRootTheTestOriginIsNotTrusted() async throws {
        let proxy = try await ProxyHarness.start { $0.upstreamCAFiles = [] }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let answer = try await fetch(through: proxy, origin.url("/hello", hostname: "localhost"))
        #expect(answer.status == "502" && answer.body.contains("not trusted"), "\(answer)")
    }

    @Test func aRefusedConnectionGivesA502AtOnceEveryTime() async throws {
        // Timeouts (60 s) beyond curl's --max-time (30 s): a refusal noticed only when a timer fires would
        // leave curl without an answer, so every 502 here was answered because the refusal was seen.
        let proxy = try await ProxyHarness.start {
            $0.handshakeTimeout = .seconds(60)
            $0.idleTimeout = .seconds(60)
        }
        defer { proxy.stop() }
        let refusing = try RefusingPort()
        for url in ["https://localhost:\(refusing.port)/", "http://127.0.0.1:\(refusing.port)/"] {
            for _ in 0..<8 {
                let answer = try await fetch(through: proxy, url)
                #expect(answer.status == "502", "\(url): \(answer); events \(proxy.events.suffix(6))")
                #expect(answer.body.contains(":\(refusing.port): connection refused"), "\(answer.body)")
            }
        }
    }

    @Test func anUnknownHostGivesA502NamingTheLookup() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        for url in ["https://no-such-host.invalid:8443/x", "http://no-such-host.invalid/x"] {
            let answer = try await fetch(through: proxy, url)
            #expect(answer.status == "502", "\(url): \(answer)")
            #expect(
                answer.body.contains("no-such-host.invalid") && answer.body.contains("DNS lookup"), "\(answer.body)")
        }
        #expect(failedUpstreamPorts(proxy.events) == [8443, 80])
    }

    private func failedUpstreamPorts(_ events: [ProxyEvent]) -> [Int] {
        events.compactMap { if case .upstreamFailed(_, _, let port, _) = $0 { port } else { nil } }
    }

    @Test func aConnectThatGetsNoAnswerTimesOutWithA502() async throws {
        let proxy = try await ProxyHarness.start {
            $0.handshakeTimeout = .seconds(1)
            $0.idleTimeout = .seconds(30)
        }
        defer { proxy.stop() }
        let silent = try UnansweredPort()
        for url in ["https://127.0.0.1:\(silent.port)/", "http://127.0.0.1:\(silent.port)/"] {
            let answer = try await fetch(through: proxy, url)
            #expect(answer.status == "502", "\(url): \(answer); events \(proxy.events)")
            #expect(
                answer.body.contains("127.0.0.1:\(silent.port)") && answer.body.contains("timed out"), "\(answer.body)")
        }
    }

    @Test func anUpstreamThatNeverAnswersTheTLSHandshakeGivesA502() async throws {
        let proxy = try await ProxyHarness.start {
            $0.handshakeTimeout = .seconds(1)
            $0.idleTimeout = .seconds(30)
        }
        defer { proxy.stop() }
        let silent = try UnansweredPort(acceptsConnections: true)
        let answer = try await fetch(through: proxy, "https://127.0.0.1:\(silent.port)/")
        #expect(answer.status == "502", "\(answer); events \(proxy.events)")
        #expect(
            answer.body.contains("127.0.0.1:\(silent.port)") && answer.body.contains("TLS handshake timed out"),
            "\(answer.body)")
    }

    @Test func anUpstreamThatDoesNotSpeakTLSGivesA502() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let answer = try await fetch(through: proxy, "https://127.0.0.1:\(origin.port)/hello")
        #expect(answer.status == "502", "\(answer)")
        #expect(
            answer.body.contains("127.0.0.1:\(origin.port)") && answer.body.contains("TLS handshake failed"),
            "\(answer.body)")
    }
}
