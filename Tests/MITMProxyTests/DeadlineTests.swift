import Foundation
import MITMCore
import Testing

@testable import MITMProxy

/// Every wait has a bound a user can see: an upstream that never answers gets a 504, a request head trickled
/// into a tunnel gets a 408, a sub-second idle timeout works, and no timeout value the options accept traps.
@Suite(.tags(.live), .skippedInFastTier) struct DeadlineTests {
    @Test func theClockSaturatesInsteadOfTrapping() {
        let now = ProxyClock.system.now()
        #expect(ProxyClock.deadline(.infinity, after: now) == UInt64.max)
        #expect(ProxyClock.deadline(1e11, after: now) == UInt64.max)
        #expect(ProxyClock.deadline(-1, after: now) == now)
        #expect(ProxyClock.deadline(.nan, after: now) == now)
        #expect(ProxyClock.deadline(0.5, after: now) == now + 500_000_000)
    }

    /// Loops sweep concurrently: one may pass a `now` older than the trim another loop just recorded.
    /// Loops call the trim concurrently, so one may pass a `now` older than the last trim another stored: no trim,
    /// and no trap on the difference. The last trim is set ahead of every real loop's clock first, so no loop of
    /// another test in this process can move it meanwhile (a loop may win the first exchange: then it is tried again).
    @Test func memoryTrimToleratesAnOlderNowAndTrimsSoonAfterAnIdleRelease() {
        let now = ProxyClock.system.now()
        let ahead = now + 10_000_000_000
        #expect((0..<100).contains { _ in MemoryTrim.trimIfDue(now: ahead) })
        #expect(!MemoryTrim.trimIfDue(now: now))
        #expect(!MemoryTrim.trimIfDue(now: ahead + 1_000_000_000))
        #expect(MemoryTrim.trimIfDue(now: ahead + 2_000_000_000))
        MemoryTrim.idleMemoryReleased()
        #expect(!MemoryTrim.trimAfterRelease(now: ahead + 2_100_000_000), "too soon after the last trim")
        #expect(MemoryTrim.trimAfterRelease(now: ahead + 2_250_000_000), "a connection turned idle: trimmed early")
    }

    @Test func timeoutsOutsideTheEnginesRangeAreRefusedAtStart() {
        let cases: [(Duration, Duration)] = [
            (.seconds(604_801), .seconds(60)), (.seconds(10), .seconds(100_000_000_000)), (.seconds(10), .zero),
            (.milliseconds(50), .seconds(60)), (.seconds(-1), .seconds(60)),
        ]
        for (handshake, idle) in cases {
            var configuration = ProxyConfiguration()
            configuration.handshakeTimeout = handshake
            configuration.idleTimeout = idle
            #expect(configuration.timeoutProblem != nil, "\(handshake) \(idle)")
        }
        #expect(ProxyConfiguration().timeoutProblem == nil)
    }

    @Test func aHalfSecondIdleTimeoutClosesAHeldConnectionAndTheProxyLivesOn() async throws {
        let proxy = try await ProxyHarness.start { $0.idleTimeout = .milliseconds(500) }
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let script = """
            import socket, sys, time, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            bare = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
            sock.sendall(proxyclient.request("GET", "http://127.0.0.1:%d/hello" % port))
            reader = proxyclient.Reader(sock)
            print(reader.response()[0])
            started = time.monotonic()
            rest = reader.until_eof()
            print("closed", rest == b"", 0.3 < time.monotonic() - started < 5)
            print("bare closed", bare.recv(10) == b"")
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "200\nclosed True True\nbare closed True\n", "\(result)")
        let again = try await Curl.run(through: proxy, [origin.url("/hello")])
        #expect(again.stdoutText == "hello from origin", "\(again)")
    }

    @Test func anOriginThatNeverAnswersGetsA504() async throws {
        let proxy = try await ProxyHarness.start { $0.idleTimeout = .seconds(1) }
        defer { proxy.stop() }
        let origin = try await ScriptedOrigin.start("silent")
        let result = try await Curl.run(through: proxy, ["-sS", "-w", "%{http_code}", origin.url("/x")])
        #expect(result.stdoutText.hasSuffix("504"), "\(result)")
        #expect(result.stdoutText.contains("127.0.0.1:\(origin.port), which did not answer within 1 s"), "\(result)")
    }

    /// The head deadline (the handshake timeout) ends with the head: a slow answer is bounded by the idle timeout.
    @Test func aSlowAnswerWaitsForTheIdleTimeoutNotTheHeadDeadline() async throws {
        let proxy = try await ProxyHarness.start {
            $0.handshakeTimeout = .milliseconds(500)
            $0.idleTimeout = .seconds(10)
        }
        defer { proxy.stop() }
        let origin = try await ScriptedOrigin.start("late", .tls(.origin))
        let script = """
            import sys, time, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            head = proxyclient.request("GET", "/x", host="localhost")
            tls.sendall(head[:10])
            time.sleep(0.2)  # the head arrives in two pieces, within the head deadline
            tls.sendall(head[10:])
            status, _, body, _, _ = proxyclient.Reader(tls).response()
            print(status, body)
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "200 b'late'\n", "\(result)")
    }

    @Test func aPlainHTTPTunnelToAnUnreachableTargetIsAnswered502() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let script = """
            import socket, sys, proxyclient
            proxy = int(sys.argv[1])
            refused = socket.socket(); refused.bind(("127.0.0.1", 0)); port = refused.getsockname()[1]; refused.close()
            sock = proxyclient.open_tunnel(proxy, "127.0.0.1", port)
            sock.sendall(proxyclient.request("GET", "/", host="127.0.0.1:%d" % port))
            print(proxyclient.Reader(sock).until_eof().split(b"\\r\\n", 1)[0].decode())
            """
        let result = try await PythonClient.run(script, [String(proxy.port)])
        #expect(result.stdoutText == "HTTP/1.1 502 Bad Gateway\n", "\(result)")
    }

    @Test func aRequestHeadTrickledIntoATunnelIsCutOffAtTheHandshakeTimeout() async throws {
        let proxy = try await ProxyHarness.start {
            $0.handshakeTimeout = .seconds(1)
            $0.idleTimeout = .seconds(30)
        }
        defer { proxy.stop() }
        let origin = try await OriginServer.start()
        let script = """
            import select, socket, sys, time, proxyclient
            proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            started = time.monotonic()
            answer = b""
            # One byte every 0.1 s (the attack's pace), until the proxy says something.
            for byte in b"GET / HTTP/1.1\\r\\nX-Slow: " + b"a" * 200:
                tls.sendall(bytes([byte]))
                if select.select([tls], [], [], 0.1)[0]:
                    break
            try:
                answer = proxyclient.Reader(tls).until_eof()
            except OSError:
                pass
            print(answer.split(b"\\r\\n", 1)[0].decode(), time.monotonic() - started < 8)
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port), proxy.caCertificate])
        #expect(result.stdoutText == "HTTP/1.1 408 Request Timeout True\n", "\(result)")
    }
}
