import Testing

@testable import MITMProxy

/// The captured command's DNS responder, over real UDP: garbage and empty datagrams do not end it.
@Suite(.tags(.live), .skippedInFastTier) struct DNSResponderTests {
    @Test func anEmptyDatagramIsIgnoredAndTheNextQuestionIsAnswered() async throws {
        let responder = try DNSResponder(host: "127.0.0.1", names: CapturedNames())
        responder.start()
        defer { responder.stop() }
        let python = """
            import socket, struct, sys
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(5)
            port = int(sys.argv[1])
            s.sendto(b"", ("127.0.0.1", port))
            s.sendto(b"\\x00", ("127.0.0.1", port))
            query = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + b"\\x06origin\\x04test\\x00" + struct.pack(">HH", 1, 1)
            s.sendto(query, ("127.0.0.1", port))
            answer, _ = s.recvfrom(512)
            print(answer[:2].hex(), answer[7], ".".join(str(b) for b in answer[-4:]))
            """
        let result = try await PythonClient.run(python, [String(responder.address.port)], timeout: .seconds(20))
        let fields = result.stdoutText.split(separator: " ")
        #expect(
            fields.count == 3 && fields[0] == "4242" && fields[1] == "1", "one A record for the query's id: \(result)")
        #expect(fields.last?.hasPrefix("198.1") == true, "a fake address from 198.18.0.0/15: \(result)")
    }
}
