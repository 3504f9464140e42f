import MITMCore
import Testing

@Suite struct CertificateProfileRuleTests {
    private func facts(_ host: String) -> TunnelFacts {
        TunnelFacts(connectHost: host, connectPort: 443, serverName: host, offeredALPN: [], client: "127.0.0.1:1")
    }

    @Test func everyProfileNameRoundTrips() throws {
        for profile in CertificateProfile.plain + [.key(path: "/keys/next=1.pem")] {
            #expect(try CertificateProfile(parsing: profile.description) == profile)
        }
        #expect(CertificateProfile.plain.filter(\.isInvalid).count == 8)
    }

    @Test func badProfilesAreClearErrors() {
        #expect(throws: CertificateProfileError.self) { try CertificateProfile(parsing: "expird") }
        #expect(throws: CertificateProfileError.self) { try CertificateProfile(parsing: "key:") }
        #expect(throws: CertificateProfileError.self) { try CertificateProfileRule(parsing: "api.test=nonsense") }
        #expect(throws: CertificateProfileError.self) { try CertificateProfileRule(parsing: "api.test:443=expired") }
        do {
            _ = try CertificateProfileRule(parsing: "expird")
        } catch {
            #expect(error.description.contains("untrusted-root"))
        }
    }

    @Test func theMostSpecificRuleDecidesPerHost() throws {
        let rules = try [
            "expired", "*.bank.test=self-signed", "api.bank.test=trusted", "cdn.test=passthrough", "key:/k=v.pem",
        ]
        .map { try CertificateProfileRule(parsing: $0) }
        // The last equally specific rule wins: `key:/k=v.pem` (for every host) replaces `expired`.
        let policy = TunnelPolicy(profileRules: rules)
        #expect(policy.decide(facts("api.bank.test")) == .intercept(.trusted))
        #expect(policy.decide(facts("www.bank.test")) == .intercept(.selfSigned))
        #expect(policy.decide(facts("other.test")) == .intercept(.key(path: "/k=v.pem")))
        #expect(policy.decide(facts("cdn.test")) == .passThrough)
        #expect(policy.keyFiles == ["/k=v.pem"])
        #expect(
            TunnelPolicy(profileRules: [try CertificateProfileRule(parsing: "expired")]).decide(facts("a.test"))
                == .intercept(.expired))
    }
}
