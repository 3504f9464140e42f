import MITMIO
import Testing

/// The text of a peer's address is what the console, the events and the per-client verdicts show.
@Suite struct SocketAddressTextTests {
    @Test(arguments: ["0.0.0.0", "127.0.0.1", "10.0.0.7", "192.168.100.9", "255.255.255.255", "1.20.3.199"])
    func anIPv4AddressReadsAsItWasWritten(_ text: String) throws {
        let address = try #require(SocketAddress.numeric(host: text, port: 8080))
        #expect(address.host == text)
        #expect(address.description == "\(text):8080")
    }

    @Test(arguments: ["::1", "fe80::1", "2001:db8::ff00:42:8329"])
    func anIPv6AddressReadsInItsShortFormAndBracketed(_ text: String) throws {
        let address = try #require(SocketAddress.numeric(host: text, port: 443))
        #expect(address.host == text)
        #expect(address.description == "[\(text)]:443")
    }
}
