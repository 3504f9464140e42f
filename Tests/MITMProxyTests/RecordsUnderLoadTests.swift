import Foundation
import Testing

/// Issue 34, item 6: a burst of requests through the real binary with `--har`, `--events` and `--report` to files
/// leaves every one of them in the records: nothing dropped, one HAR entry and one `request` and `response` line per
/// request. Not timed: it counts.
@Suite(.tags(.live), .skippedInFastTier) struct RecordsUnderLoadTests {
    @Test func aBurstOfRequestsIsRecordedInFullInEveryOutput() async throws {
        let origin = try await OriginServer.start(.plainHTTP)
        let directory = try TemporaryDirectory.make("records-burst")
        let script = """
            import json, re, signal, socket, subprocess, sys, threading, proxyclient
            binary, port, directory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            har, events, report = directory + "/run.har", directory + "/events.jsonl", directory + "/report.json"
            proxy = subprocess.Popen([binary, "--port", "0", "--ca-dir", directory + "/ca", "-q", "--no-web",
                                      "--har", har, "--events", events, "--report", report],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            line = b""
            while b"listening on" not in line:
                line = proxy.stdout.readline()
                if not line:
                    sys.exit("no listening line: " + proxy.stderr.read().decode())
            proxy_port = int(re.search(rb"127\\.0\\.0\\.1:(\\d+)", line).group(1))
            connections, per_connection, pipelined = 8, 2500, 50
            answered = [0] * connections

            def client(index):
                sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=60)
                reader = proxyclient.Reader(sock)
                url = "http://127.0.0.1:%d/hello" % port
                for _ in range(per_connection // pipelined):
                    sock.sendall(b"".join(proxyclient.request("GET", url, host="127.0.0.1:%d" % port) for _ in range(pipelined)))
                    for _ in range(pipelined):
                        status, _, _, _, _ = reader.response()
                        answered[index] += status == 200
                sock.close()

            threads = [threading.Thread(target=client, args=(index,)) for index in range(connections)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            proxy.send_signal(signal.SIGINT)
            _, stderr = proxy.communicate(timeout=120)
            log = json.load(open(har))["log"]
            lines = [json.loads(line) for line in open(events)]
            final = json.load(open(report))
            print(json.dumps({
                "answered": sum(answered), "status": proxy.returncode,
                "entries": len(log["entries"]), "harDropped": log.get("_droppedEvents"),
                "requests": sum(1 for line in lines if line["type"] == "request"),
                "responses": sum(1 for line in lines if line["type"] == "response"),
                "reportDropped": final.get("droppedEvents"), "final": final.get("final"),
                "warning": [line for line in stderr.decode().splitlines() if "dropped" in line],
            }))
            """
        let result = try await PythonClient.run(
            script, [RepositoryLayout.builtExecutable, String(origin.port), directory],
            timeout: .seconds(900))
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any], "\(result)")
        #expect(figures["answered"] as? Int == 20_000, "\(figures)")
        #expect(figures["status"] as? Int == 0, "\(figures)")
        #expect(figures["entries"] as? Int == 20_000, "one HAR entry per request: \(figures)")
        #expect(figures["requests"] as? Int == 20_000 && figures["responses"] as? Int == 20_000, "\(figures)")
        #expect(figures["harDropped"] is NSNull && figures["reportDropped"] is NSNull, "\(figures)")
        #expect(figures["final"] as? Bool == true && (figures["warning"] as? [String])?.isEmpty == true, "\(figures)")
    }
}
