import Dispatch
import Foundation
import MITMCore

/// A client command run through the proxy, with the proxy and its CA in the environment.
struct ClientCommand {
    let arguments: [String]
    let proxyPort: Int
    let caPath: String
    /// The `--proxy-auth` credentials, put into the proxy URLs.
    var credentials: ProxyCredentials?

    struct LaunchError: Error, CustomStringConvertible {
        let description: String
    }

    /// The environment: the caller's, plus proxy variables and CA paths that common clients read.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        let proxy = "http://\(credentials.map { $0.urlUserInfo + "@" } ?? "")127.0.0.1:\(proxyPort)"
        for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy"] {
            environment[name] = proxy
        }
        // Everything must go through the proxy, or a pinned host would be "unseen".
        environment.removeValue(forKey: "NO_PROXY")
        environment.removeValue(forKey: "no_proxy")
        for name in ["SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "MITM_PROXY_CA"] {
            environment[name] = caPath
        }
        environment["MITM_PROXY_PORT"] = String(proxyPort)
        return environment
    }

    /// Runs the command to its end; SIGINT/SIGTERM to the proxy are passed on to it.
    func runToCompletion() throws -> ClientCommandOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try resolvedExecutable())
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        do {
            try process.run()
        } catch {
            throw LaunchError(description: "cannot run \(arguments[0]): the system refused to start it (is it a program for this machine, with a valid #! line?)")
        }
        let forwarder = SignalWaiter.forward { process.terminate() }
        done.wait()
        forwarder.cancel()
        let killed = process.terminationReason == .uncaughtSignal
        return ClientCommandOutcome(command: arguments.joined(separator: " "), exitStatus: killed ? nil : process.terminationStatus,
                                    signal: killed ? process.terminationStatus : nil)
    }

    private func resolvedExecutable() throws -> String {
        let name = arguments[0]
        if name.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: name) else {
                throw LaunchError(description: "client command \(name) is not an executable file")
            }
            return name
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw LaunchError(description: "client command \(name) not found in PATH")
    }
}
