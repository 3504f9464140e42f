import MITMCore
import Testing

@Suite struct HostPatternTests {
    private func pattern(_ text: String) throws -> HostPattern {
        try HostPattern(text)
    }

    @Test func exactNamesMatchThemselvesOnly() throws {
        let exact = try pattern("example.com")
        #expect(exact.matches("example.com"))
        #expect(exact.matches("EXAMPLE.Com"))
        #expect(!exact.matches("www.example.com"))
        #expect(!exact.matches("example.co"))
        #expect(!exact.matches("badexample.com"))
    }

    @Test func wildcardMatchesSubdomainsAtAnyDepthButNotTheParent() throws {
        let wildcard = try pattern("*.Example.com")
        #expect(wildcard.matches("a.example.com"))
        #expect(wildcard.matches("a.b.c.example.com"))
        #expect(wildcard.matches("API.EXAMPLE.COM"))
        #expect(!wildcard.matches("example.com"))
        #expect(!wildcard.matches(".example.com"))
        #expect(!wildcard.matches("badexample.com"))
        #expect(!wildcard.matches("example.com.evil.test"))
    }

    @Test func starAloneMatchesEverything() throws {
        let all = try pattern("*")
        for host in ["example.com", "127.0.0.1", "::1", "x"] {
            #expect(all.matches(host))
        }
    }

    @Test func trailingDotsAreIgnoredOnBothSides() throws {
        #expect(try pattern("example.com.").matches("example.com"))
        #expect(try pattern("example.com").matches("example.com."))
        #expect(try pattern("*.example.com.").matches("a.example.com."))
        #expect(try pattern("example.com.") == pattern("EXAMPLE.COM"))
    }

    @Test func ipLiteralsMatchExactly() throws {
        let v4 = try pattern("127.0.0.1")
        #expect(v4.matches("127.0.0.1"))
        #expect(!v4.matches("127.0.0.10"))
        #expect(!v4.matches("27.0.0.1"))
        let v6 = try pattern("::1")
        #expect(v6.matches("::1"))
        #expect(v6.matches("[::1]"))
        #expect(try pattern("[2001:DB8::1]").matches("2001:db8::1"))
        #expect(!v6.matches("::2"))
    }

    @Test func describesTheCanonicalPattern() throws {
        #expect(try pattern("*.Example.COM.").description == "*.example.com")
        #expect(try pattern("*").description == "*")
        #expect(try pattern("[::1]").description == "::1")
    }

    @Test(arguments: [
        ("", HostPatternError.empty),
        ("a b.example", .whitespace("a b.example")),
        (" example.com", .whitespace(" example.com")),
        ("tab\t.example", .whitespace("tab\t.example")),
        ("bücher.example", .nonASCII("bücher.example")),
        ("*example.com", .misplacedWildcard("*example.com")),
        ("a.*.example.com", .misplacedWildcard("a.*.example.com")),
        ("example.*", .misplacedWildcard("example.*")),
        ("**", .misplacedWildcard("**")),
        ("*.*.example.com", .misplacedWildcard("*.*.example.com")),
        ("https://example.com", .invalidCharacter("/", in: "https://example.com")),
        ("a..example", .emptyLabel("a..example")),
        (".example", .emptyLabel(".example")),
        ("*.", .emptyLabel("*.")),
        (".", .emptyLabel(".")),
    ])
    func rejectsInvalidPatterns(text: String, expected: HostPatternError) {
        #expect(throws: expected) { try HostPattern(text) }
    }

    @Test func errorsGiveHumanReasons() {
        #expect(HostPatternError.misplacedWildcard("a*").description.contains("*.example.com"))
        #expect(HostPatternError.invalidCharacter("/", in: "http://x").description.contains("not a URL"))
        #expect(HostPatternError.empty.description == "host pattern is empty")
    }
}
