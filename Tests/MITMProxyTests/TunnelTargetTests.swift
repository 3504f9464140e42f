import Foundation
import Testing

/// Requests inside an intercepted tunnel that name another place are answered by the proxy, never
/// forwarded to the tunnel's origin under another name; the origin keeps every byte it gets, so "never forwarded" is
/// checked on the wire.
@Suite(.tags(.live), .skippedInFastTier) struct TunnelTargetTests {
    static let client = """
        import socket, ssl, sys, proxyclient
        proxy, port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
        shapes = {
            "elsewhere": b"GET https://evil.test/MARKER HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n",
            "no-host": b"GET /MARKER HTTP/1.1\\r\\n\\r\\n",
            "connect": b"CONNECT evil.test:443 HTTP/1.1\\r\\nHost: evil.test:443\\r\\n\\r\\n",
            "same-host": b"GET https://localhost:%d/hello HTTP/1.1\\r\\nHost: localhost:%d\\r\\n\\r\\n" % (port, port),
        }
        for name, raw in shapes.items():
            sock = proxyclient.tls_tunnel(proxy, "localhost", port, ca)
            sock.sendall(raw)
            status, _, body, _, _ = proxyclient.Reader(sock).response()
            print(name, status, body.decode(errors="replace").strip().replace("\\n", " "))
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
        dump = unverified.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=20))
        dump.sendall(b"DUMP\\r\\n")
        received = b""
        while chunk := dump.recv(65536):
            received += chunk
        print("origin saw MARKER:", b"MARKER" in received, "evil.test:", b"evil.test" in received)
        """

    @Test func aRequestForAnotherPlaceIsNeverForwarded() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let tap = try await ScriptedOrigin.start("tap", .tls(.origin))
        let result = try await PythonClient.run(
            Self.client, [String(proxy.port), String(tap.port), proxy.caCertificate], timeout: .seconds(60))
        let lines = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(result)")
        #expect(
            lines.first { $0.hasPrefix("elsewhere ") }?.hasPrefix(
                "elsewhere 421 mitm-proxy: 421 Misdirected Request: the request is for "
                    + "\"evil.test\", not for the tunnel to localhost:\(tap.port)") == true, "\(result)")
        #expect(lines.first { $0.hasPrefix("no-host ") }?.hasPrefix("no-host 400 ") == true, "\(result)")
        #expect(
            lines.first { $0.hasPrefix("connect ") }?.contains(
                "400 mitm-proxy: 400 Bad Request: a CONNECT inside the tunnel") == true, "\(result)")
        #expect(lines.first { $0.hasPrefix("same-host ") }?.hasPrefix("same-host 200") == true, "\(result)")
        #expect(lines.last == "origin saw MARKER: False evil.test: False", "\(result)")
    }
}
