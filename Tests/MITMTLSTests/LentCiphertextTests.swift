import Testing
@testable import MITMTLS

/// Ciphertext lent to a `TLSConnection` is read in place; whatever it leaves unread (a reader that pauses after one
/// record) must be kept, in order, and decrypted later after the lent buffer is gone.
@Suite struct LentCiphertextTests {
    @Test func ciphertextLeftUnreadInALentBufferIsKeptInOrder() throws {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("lent.example.test")])
        let server = try TLSConnection(server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: [])
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        let client = try TLSConnection(client: trusting, serverName: "lent.example.test", verifyName: "lent.example.test", alpn: [])
        let handshake = interactInMemory(client: client, server: server)
        #expect(handshake.client == .complete && handshake.server == .complete)

        let sent = (0..<50_000).map { UInt8($0 % 241) }
        #expect(try server.write(sent).get() == sent.count)
        var ciphertext = server.takeOutput()
        let more = (0..<10).map { UInt8($0) }
        #expect(try server.write(more).get() == more.count)
        ciphertext += server.takeOutput()

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
        defer { buffer.deallocate() }
        var received: [UInt8] = []
        // Lend half of the ciphertext and read one record only; then lend the rest (the first half's tail is kept).
        let half = ciphertext.count / 2
        ciphertext.withUnsafeBytes { all in
            client.lendInput(UnsafeRawBufferPointer(rebasing: all[..<half])) {
                if case .data(let count) = client.read(into: buffer) { received += buffer[0..<count] }
            }
        }
        #expect(received.count == 16_384)
        ciphertext.withUnsafeBytes { all in
            client.lendInput(UnsafeRawBufferPointer(rebasing: all[half...])) {
                if case .data(let count) = client.read(into: buffer) { received += buffer[0..<count] }
            }
        }
        while case .data(let count) = client.read(into: buffer) { received += buffer[0..<count] }
        #expect(received == sent + more)
        #expect(client.read(into: buffer) == .needsInput)
    }
}
