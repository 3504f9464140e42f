import Foundation
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct PinCheckTests {
    private func check(_ sample: String, certs: [String], domains: [String] = [], json: Bool = false) async throws
        -> PinsToolResult
    {
        let pki = try await TestPKI.withPinLeaves()
        let directory = try TemporaryDirectory()
        var options = PinsCheckOptions(configurationPath: try await SampleFiles.instantiate(sample, in: directory))
        options.files = certs.map(pki.path)
        options.domains = domains
        options.json = json
        return PinsTool.check(options)
    }

    private func warningCodes(_ result: PinsToolResult) throws -> [[String]] {
        let document = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let domains = try #require(document?["domains"] as? [[String: Any]])
        return domains.map { ($0["warnings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } }
    }

    @Test func caPinsMatchTheIntermediateWithABackup() async throws {
        let result = try await check("ats-ca-pins.plist", certs: ["chain.pem"])
        #expect(result.exitStatus == 0)
        #expect(result.standardOutput.contains("leaf.test (and subdomains): MATCH"))
        #expect(
            result.standardOutput.contains(
                "matches [1] intermediate CN=mitm-proxy TEST Public Intermediate – not a trust anchor"))
        #expect(!result.standardOutput.contains("warning"))
    }

    @Test func leafPinThatMatchesNothingFailsWithRotationWarnings() async throws {
        let result = try await check("ats-leaf-mismatch.plist", certs: ["chain.pem"], json: true)
        #expect(result.exitStatus == 1)
        #expect(try warningCodes(result) == [["single-pin", "leaf-only"]])
        let text = try await check("ats-leaf-mismatch.plist", certs: ["chain.pem"])
        #expect(text.standardOutput.contains("leaf.test: NO MATCH"))
        #expect(text.standardOutput.contains("The pinned domain does not match this chain."))
    }

    @Test func atsNeedsAMatchInEachListPresent() async throws {
        let caOnly = try await check("ats-leaf-and-ca.plist", certs: ["other-chain.pem"])
        #expect(caOnly.exitStatus == 1)
        let both = try await check("ats-leaf-and-ca.plist", certs: ["chain.pem"], json: true)
        #expect(both.exitStatus == 0)
        #expect(try warningCodes(both) == [["leaf-required"]])
    }

    @Test func expiringLeafPinIsARotationRisk() async throws {
        let result = try await check("ats-expiring.plist", certs: ["expiring-chain.pem"], json: true)
        #expect(result.exitStatus == 0)
        #expect(try warningCodes(result) == [["single-pin", "expiring-pins", "leaf-only"]])
        let text = try await check("ats-expiring.plist", certs: ["expiring-chain.pem"]).standardOutput
        #expect(
            text.contains(
                "every pin that matches is on a certificate that expires within 30 days ([0] leaf CN=expiring.test"))
    }

    @Test func mistakenPinsAreExplained() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let result = try await check("ats-mistakes.plist", certs: ["chain.pem"])
        #expect(result.exitStatus == 1)
        let text = result.standardOutput
        let leafPin = try await pki.opensslPin("leaf.pem")
        #expect(text.contains("this is the SHA-256 of the raw key of [0] leaf CN=leaf.test, O=mitm-proxy tests"))
        #expect(text.contains("not of its SubjectPublicKeyInfo: the pin for that key is \(leafPin)"))
        #expect(text.contains("written with the OkHttp/curl prefix"))
        #expect(text.contains("fixed, it would match [0] leaf"))
        #expect(
            text.contains("but NSPinnedLeafIdentities is compared only with the leaf: move it to NSPinnedCAIdentities"))
        #expect(
            text.contains(
                "the whole certificate [0] leaf CN=leaf.test, O=mitm-proxy tests, not of its public key: the key pin is \(leafPin)"
            ))
    }

    @Test func twoDomainsOneMismatchExitsOneUnlessTheMatchingOneIsChosen() async throws {
        let all = try await check("ats-two-domains.plist", certs: ["chain.pem"])
        #expect(all.exitStatus == 1)
        #expect(all.standardOutput.contains("1 of 2 pinned domains match this chain."))
        let chosen = try await check("ats-two-domains.plist", certs: ["chain.pem"], domains: ["leaf.test"])
        #expect(chosen.exitStatus == 0)
        let unknown = try await check("ats-two-domains.plist", certs: ["chain.pem"], domains: ["nope.test"])
        #expect(unknown.exitStatus == 2)
        #expect(unknown.standardError.contains("pins no domain nope.test; it pins: leaf.test, other.test"))
    }

    @Test func aDomainTheLeafDoesNotNameGetsANote() async throws {
        let text = try await check("ats-two-domains.plist", certs: ["chain.pem"]).standardOutput
        #expect(text.contains("do not cover other.test: a server for other.test would not present it"), "\(text)")
        #expect(!text.contains("do not cover leaf.test"), "\(text)")
        let json = try await check("ats-two-domains.plist", certs: ["chain.pem"], json: true).standardOutput
        #expect(json.contains("do not cover other.test"), "\(json)")
    }

    @Test func aWildcardNameCoversOneLabel() {
        #expect(LeafNameCoverage.covers("*.example.test", "api.example.test"))
        #expect(LeafNameCoverage.covers("API.example.test", "api.EXAMPLE.test"))
        #expect(!LeafNameCoverage.covers("*.example.test", "a.b.example.test"))
        #expect(!LeafNameCoverage.covers("*.example.test", "example.test"))
        #expect(!LeafNameCoverage.covers("*.example.test", ".example.test"))
    }

    @Test func androidPinsMatchAnyCertificate() async throws {
        let result = try await check("nsc-match.xml", certs: ["chain.pem"], json: true)
        #expect(result.exitStatus == 0)
        #expect(try warningCodes(result) == [[]])
        let document = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let pins = ((document?["domains"] as? [[String: Any]])?.first?["pins"] as? [[String: Any]]) ?? []
        #expect(pins.map { $0["matches"] as? [Int] } == [[0], [2]])
        #expect(document?["allMatched"] as? Bool == true)
    }

    @Test func androidMismatchExitsOne() async throws {
        let result = try await check("nsc-mismatch.xml", certs: ["chain.pem"])
        #expect(result.exitStatus == 1)
        #expect(result.standardOutput.contains("leaf.test: NO MATCH"))
    }

    @Test func expiredPinSetMeansPinningIsOff() async throws {
        let result = try await check("nsc-expired.xml", certs: ["chain.pem"], json: true)
        #expect(result.exitStatus == 0)
        #expect(try warningCodes(result) == [["single-pin", "leaf-only", "pin-set-expired"]])
    }

    @Test func expiringPinSetAndCertificates() async throws {
        let result = try await check("nsc-expiring.xml", certs: ["expiring-chain.pem"], json: true)
        #expect(result.exitStatus == 0)
        #expect(try warningCodes(result) == [["expiring-pins", "leaf-only", "pin-set-expiring"]])
    }

    @Test func userCAsThatOverridePinsAreFlagged() async throws {
        let result = try await check("nsc-nested.xml", certs: ["chain.pem"], json: true)
        #expect(result.exitStatus == 0)
        #expect(try warningCodes(result) == [["override-pins"], []])
        let text = try await check("nsc-nested.xml", certs: ["chain.pem"]).standardOutput
        #expect(text.contains("a user-installed CA, such as mitm-proxy's, defeats these pins"))
    }

    @Test func badConfigurationIsExitTwo() async throws {
        for sample in ["no-ats.plist", "ats-no-pinned-domains.plist", "nsc-no-pin-set.xml", "nsc-broken.xml"] {
            let result = try await check(sample, certs: ["chain.pem"])
            #expect(result.exitStatus == 2, "\(sample)")
            #expect(result.standardError.contains(sample), "\(sample)")
        }
    }

    @Test func missingChainFileIsExitTwo() async throws {
        let result = try await check("nsc-match.xml", certs: ["absent.pem"])
        #expect(result.exitStatus == 2)
        #expect(result.standardError.contains("absent.pem: no such file"))
    }

    @Test func pinValuesAreDiagnosed() {
        #expect(PinValue("AQID", chain: []).problem == "decodes to 3 bytes, not the 32 of a SHA-256")
        #expect(
            PinValue(String(repeating: "ab", count: 32), chain: []).problem?.hasPrefix(
                "hex, not base64: in base64 it is") == true)
        #expect(PinValue("***", chain: []).problem == "not base64")
        #expect(PinValue(" \(SampleFiles.backupPin)\n", chain: []).canonical == SampleFiles.backupPin)
    }
}
