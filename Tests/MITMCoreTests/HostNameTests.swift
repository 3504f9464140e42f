import Testing

@testable import MITMCore

@Suite struct HostNameTests {
    static let accepted: [(String, String)] = [
        ("example.com", "example.com"),
        ("WWW.Example.COM", "www.example.com"),
        ("example.com.", "example.com"),
        ("localhost", "localhost"),
        ("_dmarc.example.com", "_dmarc.example.com"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("a-b-c.d-e", "a-b-c.d-e"),
        ("1e100.net", "1e100.net"),
        ("123.example", "123.example"),
        ("1.2.3.4", "1.2.3.4"),
        ("0.0.0.0", "0.0.0.0"),
        ("255.255.255.255", "255.255.255.255"),
        ("10.0.0.1.", "10.0.0.1"),
        ("::1", "::1"),
        ("::", "::"),
        ("2001:DB8::ABCD", "2001:db8::abcd"),
        ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
        ("1::", "1::"),
        ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7::"),
        ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),
        ("64:ff9b::1.2.3.4", "64:ff9b::1.2.3.4"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:1.2.3.4"),
    ]

    @Test(arguments: accepted)
    func validHostsAreNormalized(raw: String, normalized: String) {
        #expect(HostName.validate(raw) == normalized)
    }

    static let rejected: [String] = [
        "", " ", ".", "..", "example .com", " example.com", "example.com ", "example.com\t",
        "evil.com/.good.com", "evil.com\\.good.com", "evil.com?.good.com", "evil.com#.good.com",
        "user@evil.com", "evil.com%2f.good.com", "evil.com%00", "ex\u{0}ample.com", "\r\nexample.com",
        "example.com\u{7F}",
        "exämple.com", "ｅｘａｍｐｌｅ.com", "пример.рф", "example.com\u{200B}",
        "a..b", ".example.com", "example..com", "example.com..", "exa*mple.com", "example.com:443", "[::1]",
        String(repeating: "a", count: 64) + ".com",
        "256.1.1.1", "1.2.3", "1.2.3.4.5", "127.1", "0x7f.0.0.1", "010.0.0.1", "1.2.3.04", "1234.1.1.1", "1.2.3.",
        "example.123", "host.0x1F",
        "1:2:3:4:5:6:7:8:9", "1::2::3", ":::", ":1", "1:", ":1:2:3:4:5:6:7", "12345::1", "g::1", "::1%eth0",
        "fe80::1%25en0",
        "1:2:3:4:5:6:7:1.2.3.4", "1.2.3.4::", "::1.2.3", "::256.0.0.1", "1::2:3:4:5:6:7:8",
    ]

    @Test(arguments: rejected)
    func hostileOrInvalidHostsAreRejected(raw: String) {
        #expect(HostName.validate(raw) == nil)
    }

    @Test func lengthLimits() {
        let label63 = String(repeating: "a", count: 63)
        #expect(HostName.validate(label63 + ".com") == label63 + ".com")
        let name253 = [label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")
        #expect(name253.utf8.count == 253)
        #expect(HostName.validate(name253) == name253)
        #expect(HostName.validate(name253 + ".") == name253)
        #expect(HostName.validate(name253 + "b") == nil)
    }

    @Test func ipAddressesAreRecognized() {
        #expect(HostName.isIPAddress("192.168.1.1"))
        #expect(HostName.isIPAddress("::1"))
        #expect(HostName.isIPAddress("2001:db8::1"))
        #expect(HostName.isIPAddress("::ffff:10.0.0.1"))
        #expect(!HostName.isIPAddress("example.com"))
        #expect(!HostName.isIPAddress("[::1]"))
        #expect(!HostName.isIPAddress("1.2.3"))
        #expect(!HostName.isIPAddress("1.2.3.256"))
        #expect(!HostName.isIPAddress(""))
        #expect(HostName.isIPv6("::"))
        #expect(!HostName.isIPv6("1.2.3.4"))
    }
}
