import Foundation
import Testing

@Suite(.tags(.live), .skippedInFastTier) struct SubprocessTests {
    @Test func capturesOutputAndExitStatus() async throws {
        let result = try await Subprocess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(result.stdoutText == "out\n")
        #expect(result.stderrText == "err\n")
        #expect(result.status == 3)
        #expect(!result.succeeded && !result.timedOut && !result.terminatedBySignal)
    }

    @Test func drainsLargeOutputOnBothStreams() async throws {
        let script = "head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2; head -c 1000000 /dev/zero"
        let result = try await Subprocess.run("/bin/sh", ["-c", script])
        #expect(result.succeeded)
        #expect(result.stdout.count == 4_000_000)
        #expect(result.stderr.count == 2_000_000)
    }

    @Test func feedsLargeStdinWhileReadingOutput() async throws {
        let input = TestBytes.random(count: 5_000_000)
        let result = try await Subprocess.run("cat", stdin: input)
        #expect(result.succeeded)
        #expect(result.stdout == input)
    }

    @Test func survivesAChildThatIgnoresItsStdin() async throws {
        let result = try await Subprocess.run(
            "/bin/sh", ["-c", "exit 0"], stdin: [UInt8](repeating: 1, count: 4_000_000))
        #expect(result.succeeded)
    }

    @Test func killsAChildThatOutlivesTheTimeout() async throws {
        // Timed on the runner's own thread: a loaded concurrency pool may resume the test much later.
        let (result, took) = try await DedicatedThread.run {
            let started = ContinuousClock.now
            let result = try Subprocess.runBlocking(
                "/bin/sh", ["-c", "echo started; exec sleep 60"], timeout: .milliseconds(300))
            return (result, ContinuousClock.now - started)
        }
        #expect(result.timedOut)
        #expect(result.terminatedBySignal && result.status == SIGKILL)
        #expect(result.stdoutText == "started\n")
        // Killed long before the child would have ended by itself (a bound, not a speed test).
        #expect(took < .seconds(50))
    }

    @Test func reportsAMissingExecutable() async {
        await #expect(throws: SubprocessError.self) {
            try await Subprocess.run("mitm-proxy-no-such-tool")
        }
    }
}
