import Foundation
import MITMCore
@_spi(Testing) import MITMProxy
import Testing

/// A CONNECT tunnel whose first bytes are not a TLS ClientHello is relayed untouched, both ways, until both
/// sides close, and nothing queued for a slow reader is lost when the other side closes first.
@Suite(.tags(.live), .skippedInFastTier) struct RawTunnelTests {
    @Test func bytesThatAreNotTLSAreRelayedAsARawTunnel() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        // -p: curl sends CONNECT even for http://, then plain HTTP inside the tunnel.
        let result = try await Curl.run(
            through: proxy,
            ["-p", origin.url("/bytes/300000"), "-o", "/dev/null", "-w", "%{http_code} %{size_download}"])
        #expect(result.stdoutText == "200 300000", "\(result)")
        let tunnel = await proxy.recorder.first { if case .tunnel = $0 { true } else { false } }
        guard case .tunnel(_, let host, let port, let up, let down, _, false, _)? = tunnel else {
            Issue.record("no tunnel event in \(proxy.events)")
            return
        }
        #expect(host == "127.0.0.1" && port == Int(origin.port))
        #expect(up > 0 && down > 300_000)
        #expect(proxy.server.forgedCertificateCount == 0)
    }

    @Test func aSlowReaderGetsEverythingAfterBothSidesClosed() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        // The client half-closes at once and starts reading only after a pause (a slow reader, on purpose): meanwhile
        // the origin fills every buffer on the way, so megabytes wait in the proxy and its sockets toward the client.
        let script = """
            import socket, sys, time, proxyclient
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            sock = proxyclient.open_tunnel(proxy, "127.0.0.1", port)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            sock.sendall(proxyclient.request("GET", "/bytes/6000000", headers=[("Connection", "close")]))
            sock.shutdown(socket.SHUT_WR)
            time.sleep(1)
            status, _, body, _, _ = proxyclient.Reader(sock).response()
            print(status, len(body), body == proxyclient.pattern(6000000))
            """
        let result = try await PythonClient.run(script, [String(proxy.port), String(origin.port)])
        #expect(result.stdoutText == "200 6000000 True\n", "\(result)")
        #expect(await proxy.waitUntilIdle())
    }
}
