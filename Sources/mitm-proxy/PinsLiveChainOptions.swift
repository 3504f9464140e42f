import ArgumentParser
import MITMPins

/// The options that fetch a chain from a live server, shared by `pins` and `pins check`.
struct PinsLiveChainOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read the chain a live TLS server presents (port 443 when omitted). The chain is read, not verified.",
            valueName: "host[:port]"))
    var connect: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The SNI name to send with --connect (default: the --connect host; none for an IP address).",
            valueName: "name"))
    var servername: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Reach the --connect server through this HTTP proxy, with CONNECT.", valueName: "host:port"))
    var proxy: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Seconds allowed to connect and complete the TLS handshake.", valueName: "seconds"))
    var timeout: Double = 10

    mutating func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be more than 0 seconds") }
        if connect == nil && (servername != nil || proxy != nil) {
            throw ValidationError("--servername and --proxy go with --connect host[:port]")
        }
        _ = try request()
    }

    /// The live request, or nil without `--connect`.
    func request() throws -> LiveChainRequest? {
        guard let connect else { return nil }
        do {
            let target = try HostAndPort(parsing: connect)
            let proxy = try self.proxy.map { text throws(PinsError) in try HostAndPort(parsing: text, defaultPort: 8080)
            }
            return LiveChainRequest(target: target, serverName: servername, proxy: proxy, timeoutSeconds: timeout)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
