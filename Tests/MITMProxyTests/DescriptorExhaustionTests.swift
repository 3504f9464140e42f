import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Out of descriptors (EMFILE), the real binary pauses accepting instead of spinning on a connection it cannot
/// take, and serves again as soon as descriptors free up.
@Suite(.tags(.live), .skippedInFastTier) struct DescriptorExhaustionTests {
    @Test func theProxyWaitsOutEMFILEWithoutSpinningAndServesOnceDescriptorsFreeUp() async throws {
        // A short idle timeout lets the warm-up's pooled upstream go soon; a long handshake timeout keeps the idle
        // clients below connected for as long as the test needs them.
        let proxy = try await ProxyProcess.start(["-q", "--idle-timeout", "2", "--handshake-timeout", "120"])
        let origin = try await OriginServer.start()
        let sockets = try proxy.openSocketCount()
        let warmUp = try await curl(origin.url("/hello", hostname: "localhost"), through: proxy)
        #expect(warmUp.stdoutText == "hello from origin", "\(warmUp)")
        let baseline = try await proxy.descriptorBaseline(sockets: sockets)

        // Twenty descriptors of room, then twice as many idle clients: the proxy takes twenty, the rest wait in its
        // listen queue, which the kernel keeps completing however many the proxy cannot take.
        try await proxy.limitDescriptors(to: baseline + 20)
        let held = try (0..<40).map { _ in try LoopbackConnection(port: proxy.port) }
        // At the limit (a descriptor the process creates on its own, such as libdispatch's timer, may take one of them).
        let exhausted = await Poll.until(timeout: .seconds(60)) {
            (try? proxy.openDescriptorCount()) ?? 0 >= baseline + 20
        }
        let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(proxy.pid)/fd"))?.map {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(proxy.pid)/fd/\($0)")) ?? "?"
        }
        #expect(
            exhausted,
            "the proxy holds \((try? proxy.openDescriptorCount()) ?? -1) descriptors, \(baseline + 20) allowed: \(links ?? [])"
        )

        // A real client arrives meanwhile: it is queued, not refused.
        async let waiting = curl(origin.url("/hello", hostname: "localhost"), through: proxy)
        let cpu = try proxy.cpuSeconds()
        try await Task.sleep(for: .seconds(1))  // a measurement window, not a wait for something
        let spent = try proxy.cpuSeconds() - cpu
        #expect(spent < 0.2, "out of descriptors, the proxy used \(spent) s of CPU in one second")

        for connection in held { connection.close() }
        let served = try await waiting
        #expect(served.stdoutText == "hello from origin", "once descriptors were free again: \(served)")
        let descriptors = await proxy.descriptorsAfterSettling(at: baseline)
        #expect(descriptors == baseline, "descriptors: \(baseline) before, \(descriptors) after")
        let after = try await curl(origin.url("/hello", hostname: "localhost"), through: proxy)
        #expect(after.stdoutText == "hello from origin", "\(after)")
        await proxy.stop()
        await origin.stop()
    }

    /// Its very first clients exhaust a fresh proxy's descriptors, before anything in it armed a timer. libdispatch
    /// creates its timer descriptor with the first timer armed and, without one to spare, that timer never fires:
    /// the accept backoff then never ended and the proxy never accepted again.
    @Test func aProxyOutOfDescriptorsBeforeItsFirstTimerStillRecovers() async throws {
        // A long handshake timeout keeps the silent clients connected while the test looks (with the default 10 s, a
        // loaded machine could see them timed out and their descriptors free again before it looked).
        let proxy = try await ProxyProcess.start(["-q", "--handshake-timeout", "120"])
        let origin = try await OriginServer.start()
        let fresh = try proxy.openDescriptorCount()
        try await proxy.limitDescriptors(to: fresh + 4)
        // Stopped while they connect, the proxy finds all ten waiting at once and accepts until it runs out, before
        // any of them gets as far as arming a timer.
        kill(proxy.pid, SIGSTOP)
        let held = try (0..<10).map { _ in try LoopbackConnection(port: proxy.port) }
        kill(proxy.pid, SIGCONT)
        let exhausted = await Poll.until(timeout: .seconds(60)) { (try? proxy.openDescriptorCount()) ?? 0 >= fresh + 4 }
        #expect(
            exhausted, "the proxy holds \((try? proxy.openDescriptorCount()) ?? -1) descriptors, \(fresh + 4) allowed")
        for connection in held { connection.close() }
        let served = try await curl(origin.url("/hello", hostname: "localhost"), through: proxy)
        #expect(served.stdoutText == "hello from origin", "once descriptors were free again: \(served)")
        await proxy.stop()
        await origin.stop()
    }

    private func curl(_ url: String, through proxy: ProxyProcess) async throws -> SubprocessResult {
        try await Subprocess.run(
            "curl",
            [
                "-sS", "--max-time", "30", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                proxy.caDirectory + "/ca.pem", url,
            ], timeout: .seconds(40))
    }
}

/// A TCP connection to 127.0.0.1:`port` that says nothing until closed.
private final class LoopbackConnection {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard descriptor >= 0, connected else {
            if descriptor >= 0 { Glibc.close(descriptor) }
            throw SubprocessError(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    func close() { Glibc.close(descriptor) }
}
