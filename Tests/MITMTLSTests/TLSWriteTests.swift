import Foundation
import Testing

@testable import MITMTLS

/// `TLSConnection.write` must encrypt every byte it is given, whatever the record size.
@Suite struct TLSWriteTests {
    @Test(arguments: [1, 16_384, 16_385, 100_000])
    func aWriteLargerThanOneRecordArrivesWhole(size: Int) throws {
        let (client, server) = try handshakenPair(name: "write.example.test")

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
