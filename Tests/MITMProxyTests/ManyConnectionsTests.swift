import Foundation
import Testing

/// Thousands of short connections: every one is read and answered. (Guards against the lost first
/// reads that once left about 1 in 2,000 fresh sockets unread.)
@Suite(.tags(.live), .skippedInFastTier) struct ManyConnectionsTests {
    @Test func thousandsOfShortTunnelsAllComplete() async throws {
        // Three loops whatever the machine (the default on 2 cores is one): connections land on all of them.
        let proxy = try await ProxyHarness.start { $0.loopCount = 3 }
        defer { proxy.stop() }
        let origin = try await OriginServer.start(.plainHTTP)
        let script = """
            import socket, sys, threading
            proxy, port = int(sys.argv[1]), int(sys.argv[2])
            failures, lock = [], threading.Lock()
            def worker(count):
                for _ in range(count):
                    try:
                        s = socket.create_connection(("127.0.0.1", proxy), timeout=5)
                        s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n" % port)
                        head = b""
                        while b"\\r\\n\\r\\n" not in head:
                            chunk = s.recv(1024)
                            if not chunk: raise EOFError("proxy closed before answering CONNECT")
                            head += chunk
                        s.sendall(b"GET /hello HTTP/1.0\\r\\n\\r\\n")
                        answer = b""
                        while True:
                            chunk = s.recv(4096)
                            if not chunk: break
                            answer += chunk
                        if not answer.endswith(b"hello from origin"): raise ValueError(answer[:80])
                        s.close()
                    except Exception as error:
                        with lock: failures.append(repr(error))
            threads = [threading.Thread(target=worker, args=(400,)) for _ in range(8)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(len(failures), failures[:3])
            """
        let result = try await PythonClient.run(
            script, [String(proxy.port), String(origin.port)], timeout: .seconds(120))
        #expect(result.stdoutText == "0 []\n", "\(result)")
        #expect(await proxy.waitUntilIdle())
    }
}
