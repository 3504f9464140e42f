import Testing

@testable import MITMCore

@Suite struct ClientHelloFuzzTests {
    private static let seeds: [[UInt8]] = {
        var bare = ClientHelloBuilder()
        bare.omitsExtensionsBlock = true
        return [
            ClientHelloBuilder.typical().records(),
            ClientHelloBuilder.typical().records(fragmentSize: 13),
            ClientHelloBuilder.typical(serverName: "x.y.z.example", alpn: ["http/1.1"]).records(fragmentSize: 1),
            bare.records(),
        ]
    }()

    /// Random bytes behind a TLS-looking prefix, so the parser gets past its first-byte check.
    @Test func survivesRandomBytes() {
        var generator = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<4_000 {
            let count = Int.random(in: 0...600, using: &generator)
            var bytes: [UInt8] = [0x16, 0x03, UInt8.random(in: 0...4, using: &generator)]
            bytes += (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            checkInvariants(bytes)
        }
    }

    @Test func survivesMutatedClientHellos() {
        var generator = SplitMix64(seed: 0x5EED_0002)
        for _ in 0..<20_000 {
            var bytes = Self.seeds.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                mutate(&bytes, using: &generator)
            }
            checkInvariants(bytes)
        }
    }

    private func mutate(_ bytes: inout [UInt8], using generator: inout SplitMix64) {
        guard !bytes.isEmpty else {
            bytes = [0x16]
            return
        }
        let index = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<7, using: &generator) {
        case 0:
            bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
        case 1:
            bytes[index] = [0x00, 0x01, 0x7F, 0x80, 0xFF].randomElement(using: &generator)!
        case 2:
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
        case 3:
            let extra = (0..<Int.random(in: 1...8, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            bytes.insert(contentsOf: extra, at: index)
        case 4:
            bytes.removeSubrange(index..<min(bytes.count, index + Int.random(in: 1...16, using: &generator)))
        case 5:
            bytes.removeSubrange(index...)
        default:
            let high = index + 1 < bytes.count ? index + 1 : index
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
            bytes[high] = UInt8.random(in: 0...255, using: &generator)
        }
    }

    /// Beyond not trapping: a decision on the whole input is the same on exactly the records it spans.
    private func checkInvariants(_ bytes: [UInt8]) {
        let result = ClientHelloParser.parse(bytes)
        guard case .clientHello(let hello) = result else { return }
        #expect(hello.recordBytes > 0 && hello.recordBytes <= bytes.count)
        #expect(ClientHelloParser.parse(bytes[..<hello.recordBytes]) == result)
        if let name = hello.serverName {
            #expect(name.utf8.allSatisfy { (0x21...0x7E).contains($0) })
        }
        #expect(!hello.alpnProtocols.contains(""))
    }
}
