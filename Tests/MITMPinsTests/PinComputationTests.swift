import Foundation
import MITMTLS
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct PinComputationTests {
    @Test(arguments: TestPKI.keyTypes.map(\.stem))
    func pinMatchesTheOpenSSLPipeline(stem: String) async throws {
        let pki = try await TestPKI.withPinLeaves()
        let chain = try CertificateChain(
            source: stem, certificates: CertificateFile.read(pki.path("\(stem).pem")), served: false, now: Date())
        #expect(chain.elements.count == 1)
        #expect(chain.elements[0].pin == (try await pki.opensslPin("\(stem).pem")))
    }

    @Test func keyDescriptionsNameTypeAndSize() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let expected = ["rsa2048": "RSA 2048", "rsa4096": "RSA 4096", "p256": "EC P-256", "p384": "EC P-384"]
        for (stem, text) in expected {
            let certificate = try #require(try CertificateFile.read(pki.path("\(stem).pem")).first)
            #expect(KeyDescription(of: certificate).description == text)
        }
    }

    @Test func threeCertificateChainPinsEachElement() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let chain = try CertificateChain(
            source: "chain.pem", certificates: CertificateFile.read(pki.path("chain.pem")), served: false, now: Date())
        #expect(chain.elements.map(\.position) == [.leaf, .intermediate, .root])
        #expect(
            chain.elements.map(\.pin) == [
                try await pki.opensslPin("leaf.pem"), try await pki.opensslPin("intermediate.pem"),
                try await pki.opensslPin("root.pem"),
            ])
        #expect(chain.elements[0].subject == "CN=leaf.test, O=mitm-proxy tests")
        #expect(
            chain.elements[0].issuer
                == "CN=mitm-proxy TEST Public Intermediate – not a trust anchor, O=mitm-proxy tests")
        #expect(chain.elements[0].dnsNames == ["leaf.test"])
    }

    @Test func derFileGivesTheSamePinAsPEM() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let der = try CertificateFile.read(pki.path("rsa4096.der"))
        let element = try ChainElement(try #require(der.first), index: 0, position: .leaf, now: Date())
        #expect(element.pin == (try await pki.opensslPin("rsa4096.der", inform: "DER")))
    }

    @Test func daysLeftCountsWholeDaysFromTheReferenceTime() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let certificate = try #require(try CertificateFile.read(pki.path("expiring.pem")).first)
        let now = certificate.notAfter.addingTimeInterval(-10 * 86_400 - 3600)
        #expect(try ChainElement(certificate, index: 0, position: .leaf, now: now).daysLeft == 10)
        #expect(
            try ChainElement(certificate, index: 0, position: .leaf, now: certificate.notAfter.addingTimeInterval(60))
                .daysLeft < 0)
    }

    @Test(arguments: ["rsa2048", "rsa4096"])
    func rsaRawKeyIsThePKCS1PublicKey(stem: String) async throws {
        let pki = try await TestPKI.withPinLeaves()
        let certificate = try #require(try CertificateFile.read(pki.path("\(stem).pem")).first)
        let raw = try RawPublicKey(of: certificate)
        #expect(raw.sha256Base64 == (try await pki.opensslRSAPublicKeyHash("\(stem).pem")))
        #expect(raw.sha256Base64 != certificate.spkiSHA256Base64)
        let header = try #require(raw.subjectPublicKeyInfoHeader)
        #expect(header + raw.bytes == (try await pki.opensslSubjectPublicKeyInfo("\(stem).pem")))
    }

    @Test func ecRawKeyIsTheUncompressedPointBehindTheKnownHeader() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let headers = [
            "p256": ("3059301306072a8648ce3d020106082a8648ce3d030107034200", 65),
            "p384": ("3076301006072a8648ce3d020106052b81040022036200", 97),
        ]
        for (stem, (headerHex, length)) in headers {
            let certificate = try #require(try CertificateFile.read(pki.path("\(stem).pem")).first)
            let raw = try RawPublicKey(of: certificate)
            #expect(raw.bytes.count == length)
            #expect(raw.bytes.first == 0x04)
            #expect(raw.subjectPublicKeyInfoHeader.map(ChainReport.hex) == headerHex)
            #expect(Array(try await pki.opensslSubjectPublicKeyInfo("\(stem).pem").suffix(length)) == raw.bytes)
        }
    }

    @Test func rsa2048HeaderIsTheClassicOne() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let certificate = try #require(try CertificateFile.read(pki.path("rsa2048.pem")).first)
        let raw = try RawPublicKey(of: certificate)
        #expect(
            raw.subjectPublicKeyInfoHeader.map(ChainReport.hex) == "30820122300d06092a864886f70d01010105000382010f00")
    }
}
