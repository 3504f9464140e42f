import Foundation
import MITMCore
import Testing

@Suite struct IPAddressScopeTests {
    @Test(arguments: [
        ("127.0.0.1", IPAddressScope.loopback), ("127.255.0.9", .loopback), ("::1", .loopback),
        ("::ffff:127.0.0.1", .loopback),
        ("10.0.0.7", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.254", .privateNetwork),
        ("192.168.1.23", .privateNetwork), ("fd00::2", .privateNetwork), ("fc12:3456::1", .privateNetwork),
        ("::ffff:192.168.1.23", .privateNetwork),
        ("169.254.10.20", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("0.0.0.0", .unspecified), ("::", .unspecified),
        ("172.15.255.255", .publicInternet), ("172.32.0.1", .publicInternet), ("100.63.255.255", .publicInternet),
        ("100.128.0.1", .publicInternet), ("192.169.0.1", .publicInternet), ("8.8.8.8", .publicInternet),
        ("192.0.2.2", .publicInternet), ("203.0.113.9", .publicInternet), ("2001:db8::1", .publicInternet),
        ("2a00:1450:4001::200e", .publicInternet), ("fec0::1", .publicInternet), ("::2", .publicInternet),
        ("::ffff:8.8.8.8", .publicInternet), ("64:ff9b::808:808", .publicInternet),
    ])
    func everyRangeIsClassified(address: String, scope: IPAddressScope) throws {
        let parsed = try #require(IPAddress(address))
        #expect(parsed.scope == scope, "\(address)")
    }

    @Test func namesBracketsAndZonesAreNotAddresses() {
        for text in ["localhost", "[::1]", "fe80::1%eth0", "10.0.0.7:80", "", "1.2.3.4.5", "010.0.0.1x"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress("::ffff:10.0.0.7")?.unmappedIPv4?.description == "10.0.0.7")
        #expect(IPAddress("fd00:0::2")?.description == "fd00::2")
    }
}

@Suite struct ClientAccessPolicyTests {
    @Test func onLoopbackNobodyElseCanConnectSoNobodyIsChecked() {
        for listen in ["127.0.0.1", "::1", "127.0.0.2"] {
            let policy = ClientAccessPolicy(listenHost: listen, allowPublicClients: false)
            #expect(policy.reach == .loopbackOnly)
            #expect(policy.refusal(forClient: "127.0.0.1") == nil)
        }
    }

    @Test(arguments: ["0.0.0.0", "::", "192.168.1.5", "192.0.2.2"])
    func onANetworkAddressOnlyPrivateNetworksAreAdmitted(listen: String) {
        let policy = ClientAccessPolicy(listenHost: listen, allowPublicClients: false)
        #expect(policy.reach == .privateNetworks)
        for client in [
            "127.0.0.1", "::1", "10.1.2.3", "172.20.0.5", "192.168.1.23", "::ffff:192.168.1.23", "fd00::2",
            "169.254.3.4", "fe80::1", "100.100.1.1",
        ] {
            #expect(policy.refusal(forClient: client) == nil, "\(client) on \(listen)")
        }
        for client in ["8.8.8.8", "203.0.113.9", "192.0.2.2", "2001:db8::1", "::ffff:203.0.113.9", "0.0.0.0", "client"]
        {
            #expect(policy.refusal(forClient: client) != nil, "\(client) on \(listen)")
        }
    }

    @Test func theRefusalNamesTheAddressTheListenerAndTheFlag() throws {
        let reason = try #require(
            ClientAccessPolicy(listenHost: "0.0.0.0", allowPublicClients: false).refusal(forClient: "203.0.113.9"))
        #expect(
            reason.hasPrefix(
                "203.0.113.9 is a public address; listening on 0.0.0.0, the proxy admits only this machine and private networks"
            ))
        #expect(reason.contains("pass --allow-public-clients to admit anyone"))
    }

    @Test func allowPublicClientsAdmitsEveryone() {
        let policy = ClientAccessPolicy(listenHost: "0.0.0.0", allowPublicClients: true)
        #expect(policy.reach == .anyone)
        #expect(policy.refusal(forClient: "203.0.113.9") == nil)
        #expect(policy.summary.hasPrefix("ANYONE"))
    }
}

@Suite struct ProxyCredentialsTests {
    private func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }

    @Test func onlyTheExactCredentialsAreAccepted() throws {
        let credentials = try ProxyCredentials(parsing: "qa:s3cr:et")
        #expect(credentials.user == "qa")
        #expect(credentials.accepts(basic("qa:s3cr:et")))
        #expect(
            credentials.accepts("basic  " + Data("qa:s3cr:et".utf8).base64EncodedString()), "the scheme ignores case")
        for wrong in [
            basic("qa:s3cr:e"), basic("qa:s3cr:et!"), basic("QA:s3cr:et"), basic(""), "Bearer abc", "Basic",
            "Basic !!!", "",
        ] {
            #expect(!credentials.accepts(wrong), "\(wrong)")
        }
        #expect(!credentials.accepts(nil))
    }

    @Test func printingCredentialsNeverShowsThePassword() throws {
        let credentials = try ProxyCredentials(parsing: "qa:hunter2")
        #expect(!"\(credentials)".contains("hunter2"))
        #expect(!String(reflecting: credentials).contains("hunter2"))
        #expect(credentials.urlUserInfo == "qa:hunter2")
        #expect(try ProxyCredentials(parsing: "q a:p@ss/w:rd").urlUserInfo == "q%20a:p%40ss%2Fw%3Ard")
    }

    @Test func malformedCredentialsAreRejectedWithoutRepeatingThem() {
        let cases: [(String, ProxyCredentialsError)] = [
            ("qa", .noColon), (":pw", .emptyUser), ("qa:", .emptyPassword), ("qa:p\nw", .controlCharacter),
        ]
        for (text, expected) in cases {
            #expect(throws: expected) { try ProxyCredentials(parsing: text) }
        }
        #expect(ProxyCredentials.challenge == "Basic realm=\"mitm-proxy\", charset=\"UTF-8\"")
    }
}
