import Foundation
import MITMCore
import MITMProxy
import MITMRules
import Testing

/// What the rules' exchange machine has the HTTP/2 relay do and say: a fault after a fixed answer's head resets the
/// stream before its body, and a delayed request with edited headers is logged in the words HTTP/1 uses.
@Suite(.tags(.live), .skippedInFastTier) struct HTTP2RuleWordsTests {
    @Test func aFaultAfterTheHeadAndADelayAreDoneAndSaidAsOnHTTP1() async throws {
        var fault = RuleActions()
        fault.respond = FixedResponse(status: 200, body: "never sent")
        fault.fault = .resetAfterHeaders
        var delay = RuleActions()
        delay.delay = 0.2
        delay.requestHeaders = HeaderEdits(setFields: [HTTPHeaderField(name: "X-QA", value: "1")])
        let rules = [
            TrafficRule(name: "fault", pattern: try URLPattern(parsing: "origin.test/fault"), actions: fault),
            TrafficRule(name: "delay", pattern: try URLPattern(parsing: "origin.test/hello"), actions: delay),
        ]
        let h2 = try await HTTP2Harness.start { $0.rules = rules }
        defer { h2.harness.stop() }
        let reset = try await h2.curl(["--http2", h2.url("/fault")])
        #expect(reset.status == 92, "\(reset)")
        #expect(!reset.stdoutText.contains("never sent"), "\(reset)")
        let delayed = try await h2.curl(["--http2", "-s", "-o", "/dev/null", "-w", "%{http_code}", h2.url("/hello")])
        #expect(delayed.stdoutText == "200", "\(delayed)")
        let recorded = await Poll.until(timeout: .seconds(30)) {
            h2.events.exchange(endingWith: "/fault") != nil && h2.events.exchange(endingWith: "/hello") != nil
        }
        #expect(recorded)
        let failure = h2.events.exchange(endingWith: "/fault")?.failure
        #expect(failure == "the stream was reset after the response head by rule")
        let said = h2.events.events.compactMap { if case .ruleFired(let firing) = $0 { firing.action } else { nil } }
        #expect(said.contains("answered 200"), "\(said)")
        #expect(said.contains("delayed 200ms; request headers edited"), "\(said)")
        await h2.origin.stop()
    }

    @Test func aDelayHoldsAnAnswerAnotherRuleMakesOnAStream() async throws {
        var answer = RuleActions()
        answer.respond = FixedResponse(status: 503, body: "down")
        var delay = RuleActions()
        delay.delay = 0.3
        let rules = [
            TrafficRule(name: "down", pattern: try URLPattern(parsing: "origin.test/down"), actions: answer),
            TrafficRule(name: "slow", pattern: try URLPattern(parsing: "origin.test"), actions: delay),
        ]
        let h2 = try await HTTP2Harness.start { $0.rules = rules }
        defer { h2.harness.stop() }
        let started = ContinuousClock.now
        let answered = try await h2.curl(["--http2", "-s", "-w", " %{http_code}", h2.url("/down")])
        // A lower bound only: the answer cannot come before the delay ends, however loaded the machine.
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(answered.stdoutText == "down 503", "\(answered)")
        let said = await Poll.until(timeout: .seconds(30)) {
            h2.events.events.contains {
                if case .ruleFired(let firing) = $0 { firing.action == "delayed 300ms; answered 503" } else { false }
            }
        }
        #expect(said, "\(h2.events.events)")
        await h2.origin.stop()
    }
}
