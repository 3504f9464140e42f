import Foundation
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct SnippetTests {
    private static let backup = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

    private func snippet(
        _ format: PinsOutputFormat, files: [String] = ["chain.pem"],
        configure: (inout PinsListOptions) -> Void = { _ in }
    ) async throws -> PinsToolResult {
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsListOptions()
        options.files = files.map(pki.path)
        options.format = format
        configure(&options)
        return PinsTool.list(options)
    }

    @Test func atsPutsLeafAndCAPinsInTheirListsAndParsesAsAPlist() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await snippet(.ats) { $0.includeSubdomains = true }
        #expect(result.exitStatus == 0)
        let directory = try TemporaryDirectory()
        let plist =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n\(result.standardOutput)</dict>\n</plist>\n"
        let configuration = try AppPinConfiguration.read(try directory.write("Info.plist", plist))
        let domain = try #require(configuration.domains.first)
        #expect(domain.name == "leaf.test")
        #expect(domain.includesSubdomains)
        #expect(domain.pins.filter { $0.scope == .leaf }.map(\.value) == [try await pki.opensslPin("leaf.pem")])
        #expect(
            domain.pins.filter { $0.scope == .ca }.map(\.value) == [
                try await pki.opensslPin("intermediate.pem"), try await pki.opensslPin("root.pem"),
            ])
        #expect(result.standardError.contains("ATS requires a match in each list"))
    }

    @Test func atsWithOnlyCAPinsHasNoLeafList() async throws {
        let result = try await snippet(.ats) { $0.positions = [.intermediate, .root] }
        #expect(!result.standardOutput.contains("NSPinnedLeafIdentities"))
        #expect(result.standardOutput.contains("NSPinnedCAIdentities"))
        #expect(!result.standardOutput.contains("NSIncludesSubdomains"))
    }

    @Test func androidSnippetReadsBackWithItsExpiration() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let expiration = try #require(PinsTool.parseDay("2031-05-06"))
        let result = try await snippet(.android) {
            $0.expiration = expiration
            $0.backupPins = ["sha256/" + Self.backup]
            $0.domain = "api.example.com"
        }
        let directory = try TemporaryDirectory()
        let configuration = try AppPinConfiguration.read(try directory.write("nsc.xml", result.standardOutput))
        let domain = try #require(configuration.domains.first)
        #expect(configuration.kind == .androidNetworkSecurityConfig)
        #expect(domain.name == "api.example.com")
        #expect(domain.expiration == expiration)
        #expect(
            domain.pins.map(\.value) == [
                try await pki.opensslPin("leaf.pem"), try await pki.opensslPin("intermediate.pem"),
                try await pki.opensslPin("root.pem"),
                Self.backup,
            ])
    }

    @Test func androidDefaultExpirationIsAtMostAYear() async throws {
        let now = Date()
        let result = try await snippet(.android) { $0.now = now }
        let expected = DateText.day(now.addingTimeInterval(365 * 86_400))
        #expect(result.standardOutput.contains("<pin-set expiration=\"\(expected)\">"))
        let soon = try await snippet(.android, files: ["expiring.pem"])
        let leaf = try #require(try CertificateFile.read(try await TestPKI.withPinLeaves().path("expiring.pem")).first)
        #expect(soon.standardOutput.contains("<pin-set expiration=\"\(DateText.day(leaf.notAfter))\">"))
    }

    @Test func okhttpAddsEveryPinForTheDomainPattern() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await snippet(.okhttp) { $0.includeSubdomains = true }
        #expect(
            result.standardOutput.contains(
                ".add(\"**.leaf.test\", \"sha256/\(try await pki.opensslPin("leaf.pem"))\") // leaf CN=leaf.test"))
        #expect(
            result.standardOutput.contains(
                ".add(\"**.leaf.test\", \"sha256/\(try await pki.opensslPin("root.pem"))\") // root"))
        #expect(result.standardOutput.contains(".certificatePinner(certificatePinner)"))
    }

    @Test func trustKitWithOnePinSaysItNeedsTwo() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await snippet(.trustkit, files: ["leaf.pem"])
        #expect(result.standardOutput.contains("\"\(try await pki.opensslPin("leaf.pem"))\", // leaf"))
        #expect(result.standardOutput.contains("TrustKit refuses fewer than two pins"))
        #expect(result.standardError.contains("TrustKit refuses a configuration with fewer than two pins"))
        #expect(!result.standardOutput.contains("kTSKExpirationDate"))
        let two = try await snippet(.trustkit, files: ["leaf.pem"]) { $0.backupPins = [Self.backup] }
        #expect(!two.standardOutput.contains("refuses"))
        #expect(two.standardOutput.contains("\"\(Self.backup)\", // backup pin"))
    }

    @Test func curlPinsOnlyTheLeafKeyPlusBackups() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await snippet(.curl) { $0.backupPins = [Self.backup] }
        let expected =
            "curl --pinnedpubkey 'sha256//\(try await pki.opensslPin("leaf.pem"));sha256//\(Self.backup)' 'https://leaf.test/'\n"
        #expect(result.standardOutput == expected)
    }

    @Test func backupKeyFileGivesTheKeysPin() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await snippet(.curl, files: ["leaf.pem"]) { $0.backupKeyFiles = [pki.path("other-key.pem")] }
        #expect(result.standardOutput.contains("sha256//\(try await pki.opensslPin("other.pem"))"))
    }

    @Test func badBackupPinIsBadInput() async throws {
        let result = try await snippet(.curl) { $0.backupPins = ["not-a-pin"] }
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("backup pin not-a-pin is not a pin"))
    }

    @Test func snippetTextIsEscaped() {
        #expect(SnippetEscaping.xml("a<b>&\"") == "a&lt;b&gt;&amp;&quot;")
        #expect(SnippetEscaping.xmlComment("a--b---c") == "a- -b- - -c")
        #expect(SnippetEscaping.quoted("x\"$y\\") == "\"x\\\"\\$y\\\\\"")
    }
}
