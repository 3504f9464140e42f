import Testing

@testable import MITMTLS

/// Ciphertext lent to a `TLSConnection` is read in place; whatever it leaves unread (a reader that pauses after one
/// record) must be kept, in order, and decrypted later after the lent buffer is gone.
@Suite struct LentCiphertextTests {
    @Test func ciphertextLeftUnreadInALentBufferIsKeptInOrder() throws {
        let (client, server) = try handshakenPair(name: "lent.example.test")

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
