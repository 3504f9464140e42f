import Foundation
import Testing

/// The proxy never dials itself: a CONNECT to its own address is refused with 508 at once (nested
/// CONNECTs once took a thousand descriptors), an absolute-form request to it is served by its own pages.
@Suite(.tags(.live), .skippedInFastTier) struct SelfConnectTests {
    @Test func aConnectToTheProxysOwnAddressIsRefusedWith508() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let script = """
            import socket, sys, proxyclient
            proxy = int(sys.argv[1])
            for target in ["127.0.0.1:%d" % proxy, "localhost:%d" % proxy, "0.0.0.0:%d" % proxy]:
                sock = socket.create_connection(("127.0.0.1", proxy), timeout=20)
                nested = b"".join(b"CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n" % (target.encode(), target.encode()) for _ in range(50))
                sock.sendall(nested)
                print(proxyclient.Reader(sock).until_eof().split(b"\\r\\n", 1)[0].decode())
            """
        let result = try await PythonClient.run(script, [String(proxy.port)])
        #expect(result.stdoutText == String(repeating: "HTTP/1.1 508 Loop Detected\n", count: 3), "\(result)")
        #expect(await proxy.waitUntilIdle())
    }

    @Test func anAbsoluteFormRequestToTheProxyIsServedByItsOwnPages() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let result = try await Curl.run(through: proxy, ["-sS", "http://127.0.0.1:\(proxy.port)/ca.pem"])
        #expect(result.stdoutText.hasPrefix("-----BEGIN CERTIFICATE-----"), "\(result)")
        #expect(await proxy.waitUntilIdle())
        let exchanges = proxy.recorder.exchanges
        #expect(exchanges.count == 1, "answered without a connection from the proxy to itself: \(exchanges)")
        #expect(exchanges.first?.response?.headers.first("x-mitm-proxy") == "local")
    }
}
