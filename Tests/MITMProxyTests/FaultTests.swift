import Foundation
import Testing

/// Faults on either side of an intercepted HTTP/1.1 exchange, against the real binary: the client gets what can
/// still be said (a 502 before any response, a cut-off body after one), each exchange is recorded once, and the
/// proxy's descriptors come back to their baseline while it goes on serving.
/// A client reset mid-download is in ResourceLeakTests, a plain-HTTP client half-close in RelayFidelityTests.
@Suite(.tags(.live), .skippedInFastTier) struct FaultTests {
    /// The binary (`--events` to a file, `--idle-timeout 2` so that a pooled upstream is let go soon) in front of
    /// scripted_origin.py's `faults` behaviour, with its descriptor baseline after one exchange.
    private struct Rig {
        let proxy: ProxyProcess
        let origin: OriginServer
        let eventsFile: String
        let baseline: Int

        static func start() async throws -> Rig {
            let origin = try await ScriptedOrigin.start("faults", .tls(.origin))
            let eventsFile = TemporaryDirectory.path("fault-events")
            let proxy = try await ProxyProcess.start(["-q", "--idle-timeout", "2", "--events", eventsFile])
            let sockets = try proxy.openSocketCount()
            let warmUp = try await fetch("/warm-up", through: proxy, to: origin)
            guard warmUp["status"].int == 200 else { throw SubprocessError(description: "warm-up failed: \(warmUp)") }
            return Rig(
                proxy: proxy, origin: origin, eventsFile: eventsFile,
                baseline: try await proxy.descriptorBaseline(sockets: sockets))
        }

        /// fault_client.py: GET `path` in an intercepted tunnel, half-closing as `mode` says.
        static func fetch(_ path: String, _ mode: String? = nil, through proxy: ProxyProcess, to origin: OriginServer)
            async throws -> JSON
        {
            let result = try await PythonClient.run(
                fixture: "fault_client.py",
                [
                    String(proxy.port), String(origin.port), proxy.caDirectory + "/ca.pem", path,
                ] + (mode.map { [$0] } ?? []))
            let json = JSON(parsing: result.stdoutText)
            if json.isNull { Issue.record("fault_client.py printed no JSON: \(result)") }
            return json
        }

        func fetch(_ path: String, _ mode: String? = nil) async throws -> JSON {
            try await Self.fetch(path, mode, through: proxy, to: origin)
        }

        /// The `response` lines of the events file for `path`, once at least one is there (at most 10 s).
        func recorded(_ path: String) async -> [JSON] {
            var lines: [JSON] = []
            _ = await Poll.until {
                let text = (try? String(contentsOfFile: eventsFile, encoding: .utf8)) ?? ""
                lines = text.split(separator: "\n").map { JSON(parsing: String($0)) }
                    .filter { $0["type"].string == "response" && $0["url"].string?.hasSuffix(path) == true }
                return !lines.isEmpty
            }
            return lines
        }

        /// Descriptors back to the baseline, the proxy still serving; then stopped.
        func expectRecoveredAndStop() async throws {
            let descriptors = await proxy.descriptorsAfterSettling(at: baseline)
            #expect(
                descriptors == baseline,
                "descriptors: \(baseline) before, \(descriptors) after; \(proxy.outputText.suffix(2000))")
            let after = try await fetch("/after")
            #expect(after["status"].int == 200 && after["complete"].bool == true, "\(after)")
            await proxy.stop()
            try? FileManager.default.removeItem(atPath: eventsFile)
        }
    }

    @Test func anUpstreamResetMidBodyCutsTheClientsResponseShortAndIsRecordedOnce() async throws {
        let rig = try await Rig.start()
        for path in ["/reset-mid-body", "/reset-mid-chunked"] {
            let json = try await rig.fetch(path)
            #expect(json["status"].int == 200, "\(path): \(json)")
            // The client can tell: the body stops short of its Content-Length, or before the last chunk.
            #expect(json["complete"].bool == false, "\(path): \(json)")
            #expect(["eof", "reset"].contains(json["ended"].string ?? ""), "\(path): \(json)")
            let recorded = await rig.recorded(path)
            #expect(recorded.count == 1, "\(path) recorded \(recorded.count) times: \(recorded)")
            #expect(recorded.first?["error"].string?.contains("Connection reset by peer") == true, "\(recorded)")
        }
        try await rig.expectRecoveredAndStop()
    }

    @Test func anUpstreamThatClosesResetsOrHalfClosesBeforeAnsweringGetsTheClientA502() async throws {
        let rig = try await Rig.start()
        for path in ["/close-before-response", "/reset-before-response", "/half-close-before-response"] {
            let json = try await rig.fetch(path)
            #expect(json["status"].int == 502 && json["complete"].bool == true, "\(path): \(json)")
            let recorded = await rig.recorded(path)
            #expect(recorded.count == 1 && recorded.first?["status"].int == 502, "\(path): \(recorded)")
        }
        try await rig.expectRecoveredAndStop()
    }

    /// A client that shuts its write side after the request (with or without close_notify) still gets the whole
    /// response; an origin that half-closes after a close-delimited response has it delivered and is let go.
    @Test func halfClosesEitherWayStillDeliverTheResponse() async throws {
        let rig = try await Rig.start()
        let cases: [(path: String, mode: String?, body: Int)] = [
            ("/ok", "half-close", 2), ("/ok", "half-close-notify", 2),
            ("/half-close-after-response", nil, 100_000), ("/half-close-after-response", "half-close-notify", 100_000),
        ]
        for (path, mode, body) in cases {
            let json = try await rig.fetch(path, mode)
            #expect(
                json["status"].int == 200 && json["complete"].bool == true && json["body"].int == body,
                "\(path) \(mode ?? ""): \(json)")
        }
        let recorded = await rig.recorded("/half-close-after-response")
        #expect(recorded.count == 2 && recorded.allSatisfy { $0["error"].isNull }, "\(recorded)")
        try await rig.expectRecoveredAndStop()
    }
}
