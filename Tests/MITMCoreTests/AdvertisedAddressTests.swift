import MITMCore
import Testing

/// `--advertise HOST:PORT`: a host name or an IP address with a port a phone can type; anything else is refused with
/// what is wrong and what to give instead.
@Suite struct AdvertisedAddressTests {
    @Test(arguments: [
        ("192.168.1.23:8888", "192.168.1.23", 8888, "http://192.168.1.23:8888/"),
        ("Mac-Mini.local:18888", "mac-mini.local", 18888, "http://mac-mini.local:18888/"),
        ("[FD00::5]:8888", "fd00::5", 8888, "http://[fd00::5]:8888/"),
        ("127.0.0.1:8888", "127.0.0.1", 8888, "http://127.0.0.1:8888/"),
    ])
    func aHostAndAPortAreTakenAsAPhoneTypesThem(text: String, host: String, port: Int, url: String) throws {
        let address = try AdvertisedAddress(parsing: text)
        #expect(address.host == host && address.port == port && address.onboardingURL == url)
    }

    @Test(arguments: [
        ("192.0.2.7", "has no port"),
        ("192.0.2.7:0", "is not a number in 1...65535"),
        ("192.0.2.7:70000", "is not a number in 1...65535"),
        ("fd00::5:8888", "an IPv6 address must be in brackets"),
        ("a phone:8888", "is not a valid host name"),
        ("0.0.0.0:8888", "0.0.0.0 is a listen-on-all address, not one a phone can reach"),
        ("[::]:8888", ":: is a listen-on-all address"),
        ("", "the host is empty"),
    ])
    func anythingElseSaysWhatIsWrongAndWhatToGive(text: String, problem: String) {
        #expect {
            try AdvertisedAddress(parsing: text)
        } throws: { error in
            let message = String(describing: error)
            return message.hasPrefix("--advertise \(text): ") && message.contains(problem)
                && message.contains("give HOST:PORT")
        }
    }
}
