import Foundation
import Testing
@testable import MITMTLS

/// `TLSConnection.write` must encrypt every byte it is given, whatever the record size.
@Suite struct TLSWriteTests {
    @Test(arguments: [1, 16_384, 16_385, 100_000])
    func aWriteLargerThanOneRecordArrivesWhole(size: Int) throws {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("write.example.test")])
        let server = try TLSConnection(server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: [])
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        let client = try TLSConnection(client: trusting, serverName: "write.example.test", verifyName: "write.example.test", alpn: [])
        let handshake = interactInMemory(client: client, server: server)
        #expect(handshake.client == .complete && handshake.server == .complete)

        let sent = (0..<size).map { UInt8($0 % 251) }
        let written = try server.write(sent).get()
        #expect(written == size)
        client.receive(server.takeOutput())
        var received: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
        defer { buffer.deallocate() }
        while case .data(let count) = client.read(into: buffer) {
            received += buffer[0..<count]
        }
        #expect(received.count == size)
        #expect(received.elementsEqual(sent), "the decrypted bytes differ from those written")
    }
}
