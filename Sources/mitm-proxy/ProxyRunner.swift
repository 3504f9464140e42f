import ArgumentParser
import Dispatch
import Foundation
import MITMProxy

/// Runs the proxy in the foreground until SIGINT or SIGTERM.
struct ProxyRunner {
    let options: ProxyOptions

    func runUntilStopped() throws {
        let console = ConsoleWriter()
        let server: ProxyServer
        do {
            server = try ProxyServer(configuration: try options.makeConfiguration())
        } catch let error as ProxyStartError {
            console.err("mitm-proxy: \(error.message)")
            throw ExitCode(2)
        }
        let log = ConsoleLog(verbosity: options.verbosity)
        server.subscribe { event in
            if let line = log.line(for: event) { console.out(line) }
        }
        for warning in server.authority.warnings { console.err("warning: \(warning)") }
        if server.authority.wasCreated { console.out("Created a new CA in \(server.authority.files.directory)") }
        server.start()
        console.out("mitm-proxy listening on \(server.listenAddress) (HTTP and HTTPS proxy)")
        console.out("CA certificate: \(server.caCertificatePath) (\(server.authority.certificate.commonName ?? "mitm-proxy CA"))")
        console.out("Devices behind the proxy can download it from http://mitm.proxy/")
        if options.upstreamInsecure {
            console.err("warning: --upstream-insecure: upstream certificates are NOT verified; anyone on the path can impersonate them")
        }
        if options.host != "127.0.0.1" && options.host != "::1" {
            console.err("warning: listening on \(options.host): anyone who can reach this address can use the proxy")
        }
        SignalWaiter.waitForTermination()
        server.stop()
        console.out("mitm-proxy stopped")
    }
}

/// Blocks until SIGINT or SIGTERM arrives.
enum SignalWaiter {
    static func waitForTermination() {
        signal(SIGPIPE, SIG_IGN)
        let semaphore = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "mitm-proxy.signals")
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { @Sendable in semaphore.signal() }
            source.activate()
            sources.append(source)
        }
        semaphore.wait()
        sources.forEach { $0.cancel() }
    }
}
