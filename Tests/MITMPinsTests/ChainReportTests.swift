import Foundation
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct ChainReportTests {
    @Test func textNamesPositionSubjectIssuerKeyExpiryAndPin() async throws {
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsListOptions()
        options.files = [pki.path("chain.pem"), pki.path("rsa2048.pem")]
        let result = PinsTool.list(options)
        #expect(result.exitStatus == 0)
        let text = result.standardOutput
        #expect(text.contains("chain.pem: 3 certificates"))
        #expect(text.contains("[0] leaf  CN=leaf.test, O=mitm-proxy tests"))
        #expect(text.contains("[1] intermediate  CN=mitm-proxy TEST Public Intermediate – not a trust anchor"))
        #expect(text.contains("[2] root  CN=mitm-proxy TEST Public Root – not a trust anchor"))
        #expect(
            text.contains("issuer              CN=mitm-proxy TEST Public Root – not a trust anchor, O=mitm-proxy tests")
        )
        #expect(text.contains("key                 EC P-256"))
        #expect(text.contains("key                 RSA 2048"))
        #expect(text.contains("days left)"))
        #expect(text.contains("SPKI-SHA256-BASE64  \(try await pki.opensslPin("leaf.pem"))"))
        #expect(!text.contains("raw key"))
    }

    @Test func rawKeyIsLabelledNotAPin() async throws {
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsListOptions()
        options.files = [pki.path("rsa2048.pem")]
        options.rawKey = true
        let text = PinsTool.list(options).standardOutput
        #expect(
            text.contains("raw key SHA-256     \(try await pki.opensslRSAPublicKeyHash("rsa2048.pem"))  (NOT a pin)"))
        #expect(text.contains("PKCS#1 RSAPublicKey (DER), 270 bytes"))
        #expect(text.contains("SecKeyCopyExternalRepresentation"))
    }

    @Test func expiringCertificateIsFlagged() async throws {
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsListOptions()
        options.files = [pki.path("expiring.pem")]
        let text = PinsTool.list(options).standardOutput
        #expect(text.contains("expires within 30 days"))
    }

    @Test func jsonCarriesEveryFieldAndRawKeyOnlyWhenAsked() async throws {
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsListOptions()
        options.files = [pki.path("chain.pem"), pki.path("rsa2048.pem")]
        options.format = .json
        let plain =
            try JSONSerialization.jsonObject(with: Data(PinsTool.list(options).standardOutput.utf8)) as? [String: Any]
        let chains = try #require(plain?["chains"] as? [[String: Any]])
        let certificates = try #require(chains.first?["certificates"] as? [[String: Any]])
        #expect(certificates.map { $0["position"] as? String } == ["leaf", "intermediate", "root"])
        #expect(certificates[0]["pin"] as? String == (try await pki.opensslPin("leaf.pem")))
        #expect(certificates[0]["keyAlgorithm"] as? String == "EC")
        #expect(certificates[0]["keyCurve"] as? String == "P-256")
        #expect(certificates[2]["keyBits"] as? Int == 256)
        #expect(chains.last.flatMap { ($0["certificates"] as? [[String: Any]])?.first?["keyBits"] as? Int } == 2048)
        #expect(certificates[0]["daysLeft"] is Int)
        #expect(certificates[0]["notAfter"] is String)
        #expect(certificates[0]["rawKey"] == nil)
        options.rawKey = true
        let withRaw =
            try JSONSerialization.jsonObject(with: Data(PinsTool.list(options).standardOutput.utf8)) as? [String: Any]
        let raw =
            ((withRaw?["chains"] as? [[String: Any]])?.first?["certificates"] as? [[String: Any]])?.first?["rawKey"]
            as? [String: Any]
        #expect((raw?["note"] as? String)?.hasPrefix("not a pin") == true)
        #expect(raw?["byteCount"] as? Int == 65)
    }

    @Test func onlyKeepsTheChosenPositions() async throws {
        let pki = try await TestPKI.withPinLeaves()
        var options = PinsListOptions()
        options.files = [pki.path("chain.pem")]
        options.positions = [.root]
        let text = PinsTool.list(options).standardOutput
        #expect(text.contains("[2] root"))
        #expect(!text.contains("[0] leaf"))
    }
}
