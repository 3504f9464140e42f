import Testing

@testable import MITMCore

@Suite struct RequestTargetTests {
    @Test func originForm() throws {
        #expect(try RequestTarget.parse("/", method: "GET") == .origin("/"))
        #expect(try RequestTarget.parse("/a/b?c=d&e=%20", method: "POST") == .origin("/a/b?c=d&e=%20"))
        #expect(try RequestTarget.parse("//double", method: "GET") == .origin("//double"))
    }

    @Test func asteriskFormOnlyForOptions() throws {
        #expect(try RequestTarget.parse("*", method: "OPTIONS") == .asterisk)
        let error = #expect(throws: HTTP1ParseError.self) { try RequestTarget.parse("*", method: "GET") }
        #expect(error?.kind == .badStartLine)
        #expect(error?.reason.contains("only allowed for OPTIONS") == true)
    }

    @Test func absoluteForm() throws {
        let plain = try RequestTarget.parse("http://Example.COM/path?q=1", method: "GET")
        #expect(
            plain == .absolute(AbsoluteURL(scheme: "http", host: "example.com", port: 80, pathAndQuery: "/path?q=1")))
        guard case .absolute(let url) = plain else { return }
        #expect(url.authority == "example.com")

        let explicitPort = try RequestTarget.parse("HTTPS://api.example:8443", method: "GET")
        #expect(
            explicitPort == .absolute(AbsoluteURL(scheme: "https", host: "api.example", port: 8443, pathAndQuery: "/")))
        guard case .absolute(let secure) = explicitPort else { return }
        #expect(secure.authority == "api.example:8443")

        let defaultPort = try RequestTarget.parse("https://api.example:443/x", method: "GET")
        guard case .absolute(let defaulted) = defaultPort else { return }
        #expect(defaulted.port == 443)
        #expect(defaulted.authority == "api.example")

        let ipv6 = try RequestTarget.parse("http://[2001:DB8::1]:8080/v6", method: "GET")
        #expect(ipv6 == .absolute(AbsoluteURL(scheme: "http", host: "2001:db8::1", port: 8080, pathAndQuery: "/v6")))
        guard case .absolute(let literal) = ipv6 else { return }
        #expect(literal.authority == "[2001:db8::1]:8080")

        #expect(
            try RequestTarget.parse("http://h?x=1", method: "GET")
                == .absolute(AbsoluteURL(scheme: "http", host: "h", port: 80, pathAndQuery: "/?x=1")))
        #expect(
            try RequestTarget.parse("http://1.2.3.4:81/", method: "GET")
                == .absolute(AbsoluteURL(scheme: "http", host: "1.2.3.4", port: 81, pathAndQuery: "/")))
    }

    static let rejected: [(target: String, method: String, reason: String)] = [
        ("ftp://example.com/file", "GET", "scheme \"ftp\" is not supported"),
        ("ws://example.com/", "GET", "scheme"),
        ("http://user@evil.com/", "GET", "userinfo"),
        ("http://user:pass@good.com@evil.com/", "GET", "userinfo"),
        ("http:///path", "GET", "the host is empty"),
        ("http://:80/", "GET", "not a valid host name"),
        ("http://host:0/", "GET", "port \"0\""),
        ("http://host:65536/", "GET", "port \"65536\""),
        ("http://host:080808/", "GET", "port"),
        ("http://host:abc/", "GET", "port \"abc\""),
        ("http://host:/", "GET", "port \"\""),
        ("http://evil.com\\.good.com/", "GET", "not a valid host name"),
        ("http://exämple.com/", "GET", "not a valid host name"),
        ("http://host/path#frag", "GET", "fragment"),
        ("http://host/pa th", "GET", "visible ASCII"),
        ("http://::1/", "GET", "brackets"),
        ("http://[::1/", "GET", "no closing bracket"),
        ("http://[1.2.3.4]/", "GET", "not an IPv6 address"),
        ("http://[::1]x/", "GET", "junk after the IPv6 address"),
        ("/path#frag", "GET", "fragment"),
        ("example.com:443", "GET", "neither a path nor an http(s) URL"),
        ("", "GET", "neither"),
        ("example.com", "CONNECT", "has no port"),
        ("example.com:", "CONNECT", "port \"\""),
        ("example.com:0", "CONNECT", "port \"0\" is not a number in 1...65535"),
        ("example.com:70000", "CONNECT", "port \"70000\""),
        ("example.com:-1", "CONNECT", "port \"-1\""),
        ("::1:443", "CONNECT", "must be in brackets"),
        ("[::1]", "CONNECT", "has no port"),
        ("evil.com/.good.com:443", "CONNECT", "not a valid host name"),
        ("/", "CONNECT", "not a valid host name"),
        ("http://example.com:443", "CONNECT", "brackets"),
        (":443", "CONNECT", "not a valid host name"),
        ("user@host:443", "CONNECT", "not a valid host name"),
    ]

    @Test(arguments: rejected)
    func invalidTargetsAreRejectedWithAReason(target: String, method: String, reason: String) {
        let error = #expect(throws: HTTP1ParseError.self) { try RequestTarget.parse(target, method: method) }
        #expect(error?.kind == .badStartLine)
        #expect(error?.suggestedStatus == 400)
        #expect(error?.reason.contains(reason) == true, "reason was: \(error?.reason ?? "")")
    }

    @Test func authorityForm() throws {
        #expect(
            try RequestTarget.parse("example.com:443", method: "CONNECT") == .authority(host: "example.com", port: 443))
        #expect(
            try RequestTarget.parse("API.Example.COM.:8443", method: "CONNECT")
                == .authority(host: "api.example.com", port: 8443))
        #expect(try RequestTarget.parse("[::1]:443", method: "CONNECT") == .authority(host: "::1", port: 443))
        #expect(
            try RequestTarget.parse("[2001:DB8::2]:1", method: "CONNECT") == .authority(host: "2001:db8::2", port: 1))
        #expect(
            try RequestTarget.parse("10.0.0.1:65535", method: "CONNECT") == .authority(host: "10.0.0.1", port: 65_535))
    }

    @Test func authorityHelperAppliesTheDefaultPort() throws {
        let withDefault = try RequestTarget.parseAuthority("Example.com", defaultPort: 80)
        #expect(withDefault.host == "example.com" && withDefault.port == 80)
        let explicit = try RequestTarget.parseAuthority("[::1]:8080", defaultPort: 80)
        #expect(explicit.host == "::1" && explicit.port == 8080)
        #expect(throws: HTTP1ParseError.self) { try RequestTarget.parseAuthority("example.com", defaultPort: nil) }
    }
}
