import Foundation
import Synchronization

/// The real binary (``ProxyProcess``) in front of h2_origin.py, for HTTP/2 tests that measure the proxy process
/// itself while one client misbehaves: its peak memory, its CPU time, its descriptors, its log.
struct HTTP2ProcessHarness {
    let proxy: ProxyProcess
    let origin: OriginServer
    /// The proxy's peak RSS (kB) after the warm-up exchange.
    let peakAfterWarmUp: Int
    /// Its open descriptors after the warm-up, once the warm-up's connection is gone.
    let descriptorBaseline: Int

    /// The proxy with `-q --resolve origin.test:127.0.0.1` plus `arguments`, after one exchange through it
    /// (what the first interception creates for the life of the process is not counted against a test). Unless
    /// `arguments` say otherwise, `--idle-timeout 4`: the warm-up's HTTP/2 upstream connection idles in the pool
    /// for that long (at most 15 s) before the descriptor baseline can be taken, and again after the test.
    static func start(_ arguments: [String] = []) async throws -> HTTP2ProcessHarness {
        let origin = try await OriginServer.start(.tls(.origin), script: RepositoryLayout.h2OriginScript)
        let idle = arguments.contains("--idle-timeout") ? [] : ["--idle-timeout", "4"]
        let proxy = try await ProxyProcess.start(["-q", "--resolve", "origin.test:127.0.0.1"] + idle + arguments)
        let freshSockets = try proxy.openSocketCount()
        let (warmUp, result) = try await HTTP2Harness.h2Client(
            proxyPort: proxy.port, caFile: proxy.caDirectory + "/ca.pem", originPort: origin.port, "get", ["/hello"])
        guard warmUp["streams"][0]["status"].int == 200 else {
            throw SubprocessError(
                description: "warm-up through the proxy failed: \(result); proxy: \(proxy.outputText)")
        }
        return HTTP2ProcessHarness(
            proxy: proxy, origin: origin, peakAfterWarmUp: try proxy.memoryKilobytes("VmHWM"),
            descriptorBaseline: try await proxy.descriptorBaseline(sockets: freshSockets))
    }

    /// Runs one h2_client.py scenario through the proxy.
    func h2Client(_ scenario: String, _ arguments: [String] = []) async throws -> (JSON, SubprocessResult) {
        try await HTTP2Harness.h2Client(
            proxyPort: proxy.port, caFile: proxy.caDirectory + "/ca.pem", originPort: origin.port,
            scenario, arguments, timeout: .seconds(90))
    }

    /// Runs `scenario` and, until it ends, GET /hello again and again on connections of its own: the scenario's
    /// result and the status each of those other clients got.
    func whileServingOthers(_ scenario: String, _ arguments: [String]) async throws -> (
        JSON, SubprocessResult, others: [Int?]
    ) {
        let finished = Flag()
        async let flood = { () async throws -> (JSON, SubprocessResult) in
            defer { finished.raise() }
            return try await h2Client(scenario, arguments)
        }()
        var others: [Int?] = []
        repeat {
            others.append(try await h2Client("get", ["/hello"]).0["streams"][0]["status"].int)
        } while !finished.isRaised && others.count < 100
        let (json, result) = try await flood
        return (json, result, others)
    }

    /// How much the proxy's peak RSS grew since the warm-up, in kB.
    func peakGrowthKilobytes() throws -> Int { try proxy.memoryKilobytes("VmHWM") - peakAfterWarmUp }

    /// Waits until the proxy's descriptors are back to the baseline; the count it saw last.
    func descriptorsAfterSettling() async -> Int { await proxy.descriptorsAfterSettling(at: descriptorBaseline) }

    /// CPU seconds the proxy used over the next `window` while nobody talks to it: near zero unless something spins.
    func idleCPUSeconds(over window: Duration = .milliseconds(500)) async throws -> Double {
        let before = try proxy.cpuSeconds()
        try await Task.sleep(for: window)
        return try proxy.cpuSeconds() - before
    }

    func stop() async {
        await proxy.stop()
        await origin.stop()
    }
}

/// A flag one task raises and another reads.
private final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .releasing) }
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}
