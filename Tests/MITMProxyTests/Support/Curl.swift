/// curl through a test proxy: `--proxy`, and the proxy CA unless a test wants a client that does not trust it.
enum Curl {
    /// Runs `curl -sS --max-time 30 --proxy PROXY [--cacert CA] arguments...`.
    static func run(
        through proxy: ProxyHarness,
        trustingProxyCA: Bool = true,
        _ arguments: [String],
        stdin: [UInt8]? = nil,
        timeout: Duration = .seconds(40)
    ) async throws -> SubprocessResult {
        var options = ["-sS", "--max-time", "30", "--proxy", proxy.url]
        if trustingProxyCA { options += ["--cacert", proxy.caCertificate] }
        return try await Subprocess.run("curl", options + arguments, stdin: stdin, timeout: timeout)
    }
}
