import TestSupport
import Testing

@testable import MITMCore

/// ClientHellos from real TLS stacks, captured at test time on a loopback port.
@Suite(.tags(.live), .skippedInFastTier) struct ClientHelloRealClientTests {
    private static let pythonClient = """
        import socket, ssl, sys
        context = ssl.create_default_context()
        context.set_alpn_protocols(["h2", "http/1.1"])
        connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
        try:
            context.wrap_socket(connection, server_hostname="a.example")
        except (OSError, ssl.SSLError):
            pass
        """

    private func expectModernHello(_ captured: ClientHelloCapture.Captured) {
        guard case .clientHello(let hello) = captured.result else {
            Issue.record("expected a ClientHello, got \(captured.result)")
            return
        }
        #expect(hello.serverName == "a.example")
        #expect(hello.alpnProtocols == ["h2", "http/1.1"])
        #expect(hello.legacyVersion == 0x0303)
        #expect(hello.supportedVersions.contains(0x0304))
        #expect(hello.recordBytes == captured.bytes.count)
        for end in stride(from: 0, to: captured.bytes.count, by: 1) {
            #expect(ClientHelloParser.parse(captured.bytes[..<end]) == .needMoreData)
        }
    }

    @Test func opensslSClient() async throws {
        let captured = try await ClientHelloCapture.capture("openssl") { port in
            ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "a.example", "-alpn", "h2,http/1.1"]
        }
        expectModernHello(captured)
    }

    @Test func curl() async throws {
        let captured = try await ClientHelloCapture.capture("curl") { port in
            ["-sS", "--max-time", "10", "--resolve", "a.example:\(port):127.0.0.1", "https://a.example:\(port)/"]
        }
        expectModernHello(captured)
    }

    @Test func pythonSSL() async throws {
        let captured = try await ClientHelloCapture.capture("python3") { port in
            ["-c", Self.pythonClient, String(port)]
        }
        expectModernHello(captured)
    }
}
