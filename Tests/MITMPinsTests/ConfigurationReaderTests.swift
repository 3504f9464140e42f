import Foundation
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct ConfigurationReaderTests {
    @Test func xmlInfoPlistDomainsAndScopes() async throws {
        let directory = try TemporaryDirectory()
        let configuration = try AppPinConfiguration.read(
            try await SampleFiles.instantiate("ats-leaf-and-ca.plist", in: directory))
        #expect(configuration.kind == .ats)
        let domain = try #require(configuration.domains.first)
        #expect(domain.name == "leaf.test")
        #expect(!domain.includesSubdomains)
        #expect(domain.requiresLeafMatch && domain.requiresCAMatch)
        #expect(domain.pins.map(\.scope) == [.leaf, .leaf, .ca])
        #expect(domain.pins[1].value == SampleFiles.backupPin)
    }

    @Test func binaryInfoPlistReadsTheSame() async throws {
        let directory = try TemporaryDirectory()
        let xmlPath = try await SampleFiles.instantiate("ats-ca-pins.plist", in: directory)
        let object = try PropertyListSerialization.propertyList(
            from: Data(contentsOf: URL(fileURLWithPath: xmlPath)), format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        #expect(binary.starts(with: Data("bplist".utf8)))
        let binaryPath = try directory.write("Binary-Info.plist", binary)
        let fromXML = try AppPinConfiguration.read(xmlPath)
        let fromBinary = try AppPinConfiguration.read(binaryPath)
        #expect(fromBinary.domains == fromXML.domains)
        #expect(fromBinary.domains.first?.includesSubdomains == true)
    }

    @Test func plistWithoutATSIsBadInput() throws {
        let path = (SampleFiles.directory as NSString).appendingPathComponent("no-ats.plist")
        #expect(
            throws: PinsError(
                "\(path) has no NSAppTransportSecurity dictionary: there are no ATS pins to check (pass the app's Info.plist, or its network_security_config.xml for Android)"
            )
        ) {
            try AppPinConfiguration.read(path)
        }
    }

    @Test func plistWithoutPinnedDomainsIsBadInput() throws {
        let path = (SampleFiles.directory as NSString).appendingPathComponent("ats-no-pinned-domains.plist")
        let error = try #require(throws: PinsError.self) { try AppPinConfiguration.read(path) }
        #expect(error.message.contains("no NSPinnedDomains"))
        #expect(error.message.hasPrefix(path))
    }

    @Test func androidConfigWithInheritanceAndOverrides() async throws {
        let directory = try TemporaryDirectory()
        let configuration = try AppPinConfiguration.read(
            try await SampleFiles.instantiate("nsc-nested.xml", in: directory))
        #expect(configuration.kind == .androidNetworkSecurityConfig)
        #expect(configuration.domains.map(\.name) == ["example.test", "api.example.test"])
        let outer = configuration.domains[0]
        let inner = configuration.domains[1]
        #expect(outer.includesSubdomains && !inner.includesSubdomains)
        #expect(inner.pins == outer.pins)
        #expect(outer.pins.count == 2 && outer.pins.allSatisfy { $0.scope == .any })
        #expect(outer.overridingSources == ["user"])
        #expect(inner.overridingSources.isEmpty)
    }

    @Test func androidExpirationIsRead() async throws {
        let directory = try TemporaryDirectory()
        let now = Date()
        let configuration = try AppPinConfiguration.read(
            try await SampleFiles.instantiate("nsc-expired.xml", in: directory, now: now))
        let expiration = try #require(configuration.domains.first?.expiration)
        #expect(DateText.day(expiration) == DateText.day(now.addingTimeInterval(-30 * 86_400)))
    }

    @Test func androidConfigWithoutPinSetIsBadInput() throws {
        let path = (SampleFiles.directory as NSString).appendingPathComponent("nsc-no-pin-set.xml")
        let error = try #require(throws: PinsError.self) { try AppPinConfiguration.read(path) }
        #expect(
            error.message
                == "\(path) has no <pin-set> in any <domain-config>: this app pins nothing through its network security config"
        )
    }

    @Test func malformedXMLNamesTheFileAndLine() throws {
        let path = (SampleFiles.directory as NSString).appendingPathComponent("nsc-broken.xml")
        let error = try #require(throws: PinsError.self) { try AppPinConfiguration.read(path) }
        #expect(error.message.hasPrefix("\(path) is not well-formed XML (line"))
    }

    @Test func unknownFileKindIsBadInput() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("random.txt", "just words\n")
        let error = try #require(throws: PinsError.self) { try AppPinConfiguration.read(path) }
        #expect(
            error.message
                == "\(path) is neither an Info.plist (XML or binary) nor an Android network_security_config.xml")
    }

    @Test func coveringFollowsEachPlatformsSubdomainRule() {
        let ats = AppPinConfiguration(
            path: "Info.plist", kind: .ats,
            domains: [
                PinnedDomain(name: "example.org", includesSubdomains: true, pins: []),
                PinnedDomain(name: "api.example.org", includesSubdomains: false, pins: []),
            ])
        #expect(ats.domains(covering: "math.example.org").map(\.name) == ["example.org"])
        #expect(ats.domains(covering: "advanced.math.example.org").isEmpty)
        #expect(ats.domains(covering: "api.example.org").map(\.name) == ["api.example.org"])
        let android = AppPinConfiguration(
            path: "nsc.xml", kind: .androidNetworkSecurityConfig,
            domains: [
                PinnedDomain(name: "example.org", includesSubdomains: true, pins: [])
            ])
        #expect(android.domains(covering: "advanced.math.example.org").map(\.name) == ["example.org"])
    }
}
