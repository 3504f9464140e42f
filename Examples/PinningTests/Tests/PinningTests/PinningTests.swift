import Foundation
import MITMProxy
import Testing

/// The client under test (curl here) pins the origin's key for api.example.test and not for www.example.test.
/// Through the proxy, the pinned host must refuse the forged certificate and the other one must be intercepted:
/// that second host proves the proxy was in the path and its CA trusted, so the refusal is the pin's doing.
@Test func pinnedHostRefusesTheProxy() async throws {
    let origin = try LocalOrigin(names: ["api.example.test", "www.example.test"])
    defer { origin.stop() }
    let proxy = try ProxyServer.forTesting { configuration in  // port 0, a fresh CA in a temporary directory
        configuration.upstreamCAFiles = [origin.certificatePath]  // the proxy verifies the origin it forwards to
        configuration.resolveOverrides = ["api.example.test": "127.0.0.1", "www.example.test": "127.0.0.1"]
        configuration.silenceWindow = .seconds(1)
    }
    proxy.start()
    defer { proxy.stop() }
    // HTTPS_PROXY, SSL_CERT_FILE, CURL_CA_BUNDLE, ...: the proxy and its CA, as `mitm-proxy -- COMMAND` gives them.
    let environment = proxy.clientEnvironment.applied(to: ProcessInfo.processInfo.environment)

    let pinned = try run(["curl", "-s", "--pinnedpubkey", "sha256//\(origin.pin)",
                          "https://api.example.test:\(origin.port)/"], environment: environment)
    #expect(pinned == 90, "curl's exit status for a pin mismatch")
    let plain = try run(["curl", "-s", "-o", "/dev/null", "https://www.example.test:\(origin.port)/"],
                        environment: environment)
    #expect(plain == 0)

    #expect(await proxy.waitForVerdict(host: "api.example.test", timeout: .seconds(10))?.verdict == .refused)
    #expect(await proxy.waitForVerdict(host: "www.example.test", timeout: .seconds(10))?.verdict == .intercepted)
    let expectations = try ["refused:api.example.test", "intercepted:www.example.test"].map(Expectation.init(parsing:))
    for result in proxy.evaluate(expectations) {
        #expect(result.met, "\(result.expectation): \(result.explanation)")
    }
}

/// A local HTTPS origin on a free port: Python's HTTP server with a fresh self-signed certificate for `names`.
final class LocalOrigin {
    /// The origin's certificate, the CA file the proxy verifies it with.
    let certificatePath: String
    /// The pin an app that pins this origin ships: base64(sha256(SubjectPublicKeyInfo)).
    let pin: String
    /// The port it listens on (127.0.0.1).
    let port: Int
    private let directory: String
    private let server: Process

    init(names: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        certificatePath = directory + "/origin.pem"
        let subjectAltName = names.map { "DNS:\($0)" }.joined(separator: ",")
        _ = try shell("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=\(names[0])"
                      + " -addext subjectAltName=\(subjectAltName) -keyout \(directory)/key.pem -out \(certificatePath)")
        pin = try shell("openssl x509 -in \(certificatePath) -pubkey -noout | openssl pkey -pubin -outform der"
                        + " | openssl dgst -sha256 -binary | base64")
        let script = """
            import http.server, ssl, sys
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            server.socket = context.wrap_socket(server.socket, server_side=True)
            print(server.server_address[1], flush=True)
            server.serve_forever()
            """
        let output = Pipe()
        server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-c", script, certificatePath, directory + "/key.pem"]
        server.currentDirectoryURL = URL(fileURLWithPath: directory)
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice  // its request log
        try server.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)  // the port, once it listens
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(server.processIdentifier, SIGKILL)
            throw SetupError(description: "the origin did not start: \(line)")
        }
        self.port = port
    }

    func stop() {
        // Not terminate(): a child started from a Swift concurrency thread inherits its blocked signals, SIGTERM too.
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A step of the test's setup failed.
struct SetupError: Error, CustomStringConvertible {
    let description: String
}

/// Runs a program from PATH with `environment` and returns its exit status.
func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.environment = environment
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Runs a shell command line and returns what it printed, trimmed; throws when it fails.
func shell(_ command: String) throws -> String {
    let output = Pipe()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw SetupError(description: "\(command) failed") }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}
