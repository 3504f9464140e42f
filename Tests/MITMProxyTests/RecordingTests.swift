import Dispatch
import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// Recording runs off the loops: a subscriber that stops reading (`--events -` into a pipe nobody reads)
/// delays only the recording, never the relaying, and what it missed is counted, not waited for.
@Suite(.tags(.live), .skippedInFastTier) struct RecordingTests {
    @Test func aStalledSubscriberDoesNotStallTheProxy() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let gate = DispatchSemaphore(value: 0)
        proxy.server.subscribe { _ in
            gate.wait()
            gate.signal()
        }
        let urls = (0..<20).flatMap { ["-o", "/dev/null", origin.url("/hello?\($0)")] }
        let result = try await Curl.run(through: proxy, urls + ["-w", "%{http_code} "])
        #expect(result.stdoutText == String(repeating: "200 ", count: 20), "\(result)")
        gate.signal()
        #expect(
            await Poll.until { proxy.recorder.exchanges.count == 20 },
            "nothing recorded was lost once the subscriber caught up")
    }
}

/// The real binary with `--events -` into a pipe nobody reads: once the pipe is full, requests still go through.
@Suite(.tags(.live), .skippedInFastTier) struct UnreadEventsPipeTests {
    @Test func requestsKeepCompletingWhileNobodyReadsTheEvents() async throws {
        let origin = try await OriginServer.start(.plainHTTP)
        let script = """
            import os, re, socket, subprocess, sys, tempfile, time, proxyclient
            binary, port = sys.argv[1], int(sys.argv[2])
            ca = tempfile.mkdtemp()
            proxy = subprocess.Popen([binary, "--port", "0", "--ca-dir", ca + "/ca", "--events", "-"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            line = b""
            while b"listening on" not in line:
                line = proxy.stderr.readline()
                if not line:
                    sys.exit("no listening line")
            proxy_port = int(re.search(rb"127\\.0\\.0\\.1:(\\d+)", line).group(1))
            started = time.monotonic()
            answered = 0
            for index in range(600):   # far more events than a pipe holds (64 KiB)
                sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
                sock.sendall(proxyclient.request("GET", "http://127.0.0.1:%d/hello?%d" % (port, index)))
                status, _, _, _, _ = proxyclient.Reader(sock).response()
                answered += status == 200
                sock.close()
            print(answered, time.monotonic() - started < 60)
            proxy.kill()
            """
        let result = try await PythonClient.run(
            script, [RepositoryLayout.builtExecutable, String(origin.port)], timeout: .seconds(90))
        #expect(result.stdoutText == "600 True\n", "\(result)")
    }
}
