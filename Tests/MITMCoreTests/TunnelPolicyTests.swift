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
