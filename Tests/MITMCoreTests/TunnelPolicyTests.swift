import MITMCore
import Testing

@Suite struct TunnelPolicyTests {
    private func facts(_ connect: String, sni: String?) -> TunnelFacts {
        TunnelFacts(connectHost: connect, connectPort: 443, serverName: sni, offeredALPN: ["h2"], client: "127.0.0.1:1")
    }

    @Test func everythingIsInterceptedByDefault() {
        #expect(TunnelPolicy().decide(facts("api.bank.test", sni: "api.bank.test")) == .intercept(.trusted))
    }

    @Test func excludedHostsPassThroughBySNIOrConnectHost() throws {
        let policy = TunnelPolicy(passThroughHosts: [try HostPattern("*.apple.com"), try HostPattern("10.0.0.1")])
        #expect(policy.decide(facts("17.1.2.3", sni: "gs.apple.com")) == .passThrough)
        #expect(policy.decide(facts("10.0.0.1", sni: nil)) == .passThrough)
        #expect(policy.decide(facts("api.bank.test", sni: "api.bank.test")) == .intercept(.trusted))
        #expect(policy.decide(facts("apple.com", sni: "apple.com")) == .intercept(.trusted))
    }
}

@Suite struct HostListTests {
    private func decide(_ policy: TunnelPolicy, _ host: String, sni: String? = nil) -> TunnelDecision {
        policy.decide(
            TunnelFacts(
                connectHost: host, connectPort: 443, serverName: sni ?? host, offeredALPN: [], client: "10.0.0.7:1"))
    }

    private func patterns(_ texts: String...) throws -> [HostPattern] { try texts.map { try HostPattern($0) } }

    @Test func anInterceptListInterceptsOnlyItsHostsAndPassesTheRestThrough() throws {
        let policy = TunnelPolicy(interceptHosts: try patterns("api.bank.test", "*.cdn.test"))
        #expect(decide(policy, "api.bank.test") == .intercept(.trusted))
        #expect(decide(policy, "img.cdn.test") == .intercept(.trusted))
        #expect(decide(policy, "www.bank.test") == .passThrough)
        #expect(decide(policy, "gs.apple.com") == .passThrough)
        #expect(
            decide(policy, "17.1.2.3", sni: "api.bank.test") == .intercept(.trusted),
            "the SNI names the host behind an address")
    }

    @Test func withBothListsTheMostSpecificPatternDecides() throws {
        let narrowIntercept = TunnelPolicy(
            passThroughHosts: try patterns("*.bank.test"), interceptHosts: try patterns("api.bank.test"))
        #expect(decide(narrowIntercept, "api.bank.test") == .intercept(.trusted))
        #expect(decide(narrowIntercept, "www.bank.test") == .passThrough)
        #expect(
            decide(narrowIntercept, "example.com") == .passThrough, "an intercept list passes unlisted hosts through")

        let narrowIgnore = TunnelPolicy(
            passThroughHosts: try patterns("auth.bank.test"), interceptHosts: try patterns("*.bank.test"))
        #expect(decide(narrowIgnore, "auth.bank.test") == .passThrough)
        #expect(decide(narrowIgnore, "api.bank.test") == .intercept(.trusted))
        #expect(narrowIgnore.contradictoryPatterns.isEmpty)

        let contradictory = TunnelPolicy(
            passThroughHosts: try patterns("a.test"), interceptHosts: try patterns("A.test."))
        #expect(contradictory.contradictoryPatterns.map(\.description) == ["a.test"])
    }

    @Test func theHostListsComeBeforeTheCertificateProfiles() throws {
        var policy = TunnelPolicy(passThroughHosts: try patterns("cdn.test"))
        policy.profileRules = [try CertificateProfileRule(parsing: "expired")]
        #expect(decide(policy, "cdn.test") == .passThrough)
        #expect(decide(policy, "api.test") == .intercept(.expired))
    }

    @Test func anExpectationTheListsPassThroughIsFound() throws {
        let ignoring = TunnelPolicy(passThroughHosts: try patterns("*.bank.test"))
        #expect(ignoring.hostListsPassThrough(try HostPattern("api.bank.test")))
        #expect(ignoring.hostListsPassThrough(try HostPattern("*.bank.test")))
        #expect(ignoring.hostListsPassThrough(try HostPattern("*.x.bank.test")))
        #expect(
            !ignoring.hostListsPassThrough(try HostPattern("bank.test")), "*.bank.test does not match bank.test itself")
        #expect(!ignoring.hostListsPassThrough(try HostPattern("*")))

        let onlyAPI = TunnelPolicy(interceptHosts: try patterns("api.bank.test"))
        #expect(onlyAPI.hostListsPassThrough(try HostPattern("www.bank.test")))
        #expect(!onlyAPI.hostListsPassThrough(try HostPattern("api.bank.test")))
        #expect(!onlyAPI.hostListsPassThrough(try HostPattern("*.bank.test")), "api.bank.test can still meet it")

        let carved = TunnelPolicy(
            passThroughHosts: try patterns("*.bank.test"), interceptHosts: try patterns("*.api.bank.test"))
        #expect(
            !carved.hostListsPassThrough(try HostPattern("*.bank.test")), "hosts under api.bank.test are intercepted")
        #expect(carved.hostListsPassThrough(try HostPattern("www.bank.test")))
    }
}

@Suite struct HostPatternFileTests {
    @Test func commentsBlankLinesAndWindowsLineEndsAreSkipped() throws {
        let text =
            "# OS services\r\n*.apple.com   # iCloud, updates\r\n\r\n  gs.apple.com\t\nconnectivitycheck.gstatic.com"
        let patterns = try HostPatternFile.parse(text, file: "os-hosts.txt")
        #expect(patterns.map(\.description) == ["*.apple.com", "gs.apple.com", "connectivitycheck.gstatic.com"])
    }

    @Test func aBadLineIsNamedWithItsFileAndNumber() {
        #expect(throws: HostPatternFileError.self) {
            try HostPatternFile.parse("ok.test\nhttps://bad.test/\n", file: "hosts.txt")
        }
        do {
            _ = try HostPatternFile.parse("ok.test\napi.test:443\n", file: "hosts.txt")
        } catch {
            #expect(
                error.description.hasPrefix("hosts.txt line 2: host pattern \"api.test:443\" has a port"), "\(error)")
        }
    }

    @Test func aFileWithoutPatternsIsAnError() {
        do {
            _ = try HostPatternFile.parse("# nothing yet\n\n", file: "empty.txt")
            Issue.record("an empty pattern file was accepted")
        } catch {
            #expect(error.description == "empty.txt: it holds no host pattern")
        }
    }
}
