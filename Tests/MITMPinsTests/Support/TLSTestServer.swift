import Foundation

/// `Samples/tls_server.py` running on a port the kernel picked; stopped when released.
final class TLSTestServer: Sendable {
    let port: Int
    private let process: ChildProcess

    /// Starts the server with `arguments` (see the script's usage) and waits for its port line.
    init(_ arguments: [String]) throws {
        let script = (SampleFiles.directory as NSString).appendingPathComponent("tls_server.py")
        process = try ChildProcess(
            path: try Subprocess.executablePath("python3"), arguments: [script] + arguments,
            pipeStdin: true, inheritingStderr: true)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = process.output.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            process.kill()
            throw TestFailure("tls_server.py did not print its port")
        }
        self.port = port
    }

    /// A TLS server for the leaf.test chain that serves the other.test chain to SNI other.test.
    static func standard() async throws -> TLSTestServer {
        let pki = try await TestPKI.withPinLeaves()
        return try TLSTestServer([
            "tls", pki.path("leaf-chain.pem"), pki.path("leaf-key.pem"),
            "other.test", pki.path("other-chain.pem"), pki.path("other-key.pem"),
        ])
    }

    deinit {
        try? process.input?.close()
        process.terminate()
        if !process.waitForExit(timeout: .seconds(10)) { process.kill() }
    }
}
