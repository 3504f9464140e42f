import Foundation
import Testing

/// Bodies are streamed, never held whole: 100 MiB through the real binary does not grow its peak memory by
/// anything near 100 MiB, in either direction, and a slow reader stops the proxy reading from the origin.
@Suite(.tags(.live), .skippedInFastTier) struct StreamingMemoryTests {
    private static let hundredMebibytes = 104_857_600
    /// Allowed growth of the proxy's peak RSS: buffers and TLS state, far below the body size.
    private static let allowedGrowthKilobytes = 32 * 1024

    private func curlThrough(_ proxy: ProxyProcess, _ arguments: [String]) async throws -> SubprocessResult {
        try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "60", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                proxy.caDirectory + "/ca.pem",
            ] + arguments, timeout: .seconds(70))
    }

    @Test func aHundredMebibyteDownloadAndUploadDoNotGrowTheProxy() async throws {
        let proxy = try await ProxyProcess.start(["-q"])
        let origin = try await OriginServer.start()
        let warmUp = try await curlThrough(
            proxy, [origin.url("/bytes/1000000", hostname: "localhost"), "-o", "/dev/null"])
        #expect(warmUp.succeeded, "\(warmUp)")
        let before = try proxy.memoryKilobytes("VmHWM")

        let download = try await curlThrough(
            proxy,
            [
                origin.url("/bytes/\(Self.hundredMebibytes)", hostname: "localhost"), "-o", "/dev/null", "-w",
                "%{size_download}",
            ])
        #expect(download.stdoutText == String(Self.hundredMebibytes), "\(download)")
        let file = TemporaryDirectory.path("upload")
        // Written directly: a `head -c` subprocess cut short by its timeout on a loaded machine made a shorter file.
        try Data(count: Self.hundredMebibytes).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let upload = try await curlThrough(proxy, ["-T", file, origin.url("/digest", hostname: "localhost")])
        #expect(upload.stdoutText.contains("\"length\": \(Self.hundredMebibytes)"), "\(upload)")

        let after = try proxy.memoryKilobytes("VmHWM")
        #expect(after - before < Self.allowedGrowthKilobytes, "VmHWM grew from \(before) kB to \(after) kB")
        await proxy.stop()
    }

    @Test func aSlowReaderStopsTheProxyFromBufferingTheOrigin() async throws {
        let proxy = try await ProxyProcess.start(["-q"])
        let origin = try await OriginServer.start()
        let script = """
            import socket, sys, time, proxyclient
            proxy, port, ca, pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
            def peak():
                for line in open("/proc/%s/status" % pid):
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
            tls = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            tls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            tls.sendall(proxyclient.request("GET", "/bytes/104857600"))
            reader = proxyclient.Reader(tls)
            status, _, _ = reader.head()
            start = peak()
            received = len(reader.buffer)
            reader.buffer = b""
            # Read slowly for two seconds: about 1.3 MB while the origin could send the whole 100 MiB.
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                received += len(tls.recv(16384))
                time.sleep(0.025)
            slow_peak = peak()
            while received < 104857600:
                chunk = tls.recv(1 << 20)
                if not chunk:
                    break
                received += len(chunk)
            print(status, received, slow_peak - start)
            """
        let result = try await PythonClient.run(
            script,
            [
                String(proxy.port), String(origin.port), proxy.caDirectory + "/ca.pem", String(proxy.pid),
            ], timeout: .seconds(90))
        let fields = result.stdoutText.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(fields.prefix(2) == ["200", String(Self.hundredMebibytes)], "\(result)")
        let growth = fields.count == 3 ? Int(fields[2]) ?? .max : .max
        #expect(growth < Self.allowedGrowthKilobytes, "peak grew by \(growth) kB while the client read slowly")
        await proxy.stop()
    }
}
