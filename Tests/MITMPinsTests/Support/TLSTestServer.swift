import Foundation

/// `Samples/tls_server.py` running on a port the kernel picked; stopped when released.
final class TLSTestServer: @unchecked Sendable {
    // @unchecked Sendable: the process and pipes are only touched in init and deinit.
    let port: Int
    private let process: Process
    private let input: Pipe

    /// Starts the server with `arguments` (see the script's usage) and waits for its port line.
    init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", (SampleFiles.directory as NSString).appendingPathComponent("tls_server.py")] + arguments
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw TestFailure("tls_server.py did not print its port")
        }
        self.port = port
    }

    /// A TLS server for the leaf.test chain that serves the other.test chain to SNI other.test.
    static func standard() throws -> TLSTestServer {
        let pki = try TestPKI.shared()
        return try TLSTestServer([
            "tls", pki.path("leaf-served.pem"), pki.path("leaf.key"),
            "other.test", pki.path("other-served.pem"), pki.path("other.key"),
        ])
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}
