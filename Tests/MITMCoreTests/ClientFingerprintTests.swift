import Testing

@testable import MITMCore

/// The TLS fingerprint of a ClientHello: JA4 as its specification computes it, and the stable form that
/// one client keeps across hosts and resumptions.
@Suite struct ClientFingerprintTests {
    /// The example of the JA4 specification (a Chrome ClientHello): 15 cipher suites, 16 extensions, ALPN h2.
    private func specificationExample() -> ClientHello {
        var hello = ClientHello(
            serverName: "example.com", alpnProtocols: ["h2", "http/1.1"], legacyVersion: 0x0303,
            supportedVersions: [0x0A0A, 0x0304, 0x0303], recordBytes: 0)
        hello.cipherSuites = [
            0x1301, 0x1302, 0x1303, 0xC02B, 0xC02F, 0xC02C, 0xC030, 0xCCA9, 0xCCA8, 0xC013, 0xC014,
            0x009C, 0x009D, 0x002F, 0x0035,
        ]
        hello.extensionTypes = [
            0x001B, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002D, 0x000D, 0x0005, 0x0023, 0x0012,
            0x002B, 0xFF01, 0x000B, 0x000A, 0x0015,
        ]
        hello.signatureAlgorithms = [0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601]
        return hello
    }

    @Test func sha256MatchesTheStandardVectors() {
        #expect(
            DigitText.hex(SHA256.digest([UInt8]()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(String(repeating: "a", count: 1000))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func ja4IsComputedAsItsSpecificationSays() {
        #expect(ClientFingerprint(specificationExample()).ja4 == "t13d1516h2_8daaf6152771_e5627efa2ab1")
    }

    @Test func greaseIsIgnoredWhereverItAppears() {
        var greased = specificationExample()
        greased.supportedVersions.insert(0x2A2A, at: 0)
        let parsed = ClientHelloBuilder.typical().records()
        guard case .clientHello = ClientHelloParser.parse(parsed) else {
            Issue.record("the builder's ClientHello does not parse")
            return
        }
        #expect(
            TLSGrease.isGrease(0x0A0A) && TLSGrease.isGrease(0xFAFA) && !TLSGrease.isGrease(0x0A0B)
                && !TLSGrease.isGrease(0x1A2A))
        #expect(ClientFingerprint(greased) == ClientFingerprint(specificationExample()))
    }

    /// One client, another host or a resumption: JA4 changes, the stable form does not.
    @Test func theStableFormIgnoresWhatChangesBetweenOneClientsConnections() {
        let first = ClientFingerprint(specificationExample())
        var ipLiteral = specificationExample()
        ipLiteral.extensionTypes.removeAll { $0 == 0x0000 }
        var resumed = specificationExample()
        resumed.extensionTypes += [0x0029, 0x002A]
        var unpadded = specificationExample()
        unpadded.extensionTypes.removeAll { $0 == 0x0015 }
        for other in [ipLiteral, resumed, unpadded].map(ClientFingerprint.init) {
            #expect(other.ja4 != first.ja4)
            #expect(other.stable == first.stable)
        }
        #expect(ipLiteral.extensionTypes.count == 15 && ClientFingerprint(ipLiteral).ja4.hasPrefix("t13i1515h2_"))
    }

    /// Another stack: other suites, other extensions or other ALPN give another stable fingerprint.
    @Test func anotherStackHasAnotherFingerprint() {
        let chrome = ClientFingerprint(specificationExample())
        var fewerSuites = specificationExample()
        fewerSuites.cipherSuites.removeLast()
        var http1 = specificationExample()
        http1.alpnProtocols = ["http/1.1"]
        var noALPN = specificationExample()
        noALPN.alpnProtocols = []
        noALPN.extensionTypes.removeAll { $0 == 0x0010 }
        let others = [fewerSuites, http1, noALPN].map { ClientFingerprint($0).stable }
        #expect(!others.contains(chrome.stable))
        #expect(Set(others).count == 3)
        #expect(ClientFingerprint(http1).ja4.contains("h1_"))
        #expect(ClientFingerprint(noALPN).ja4.contains("00_"))
    }

    @Test func theParserCollectsWhatTheFingerprintNeeds() {
        guard case .clientHello(let hello) = ClientHelloParser.parse(ClientHelloBuilder.typical().records()) else {
            Issue.record("the builder's ClientHello does not parse")
            return
        }
        #expect(hello.cipherSuites == [0x1301, 0x1302, 0xC02F])
        #expect(hello.extensionTypes == [0x0000, 0x000A, 0x0010, 0x002B])
        #expect(ClientFingerprint(hello).ja4.hasPrefix("t13d0304h2_"))
    }

    @Test func theKnownStacksTableIsReadAsData() {
        let fingerprint = ClientFingerprint(specificationExample())
        let table = KnownClientStacks(
            table: "# comment\n\(fingerprint.stable)   Chromium (BoringSSL)  # trailing\nmalformed\n\n")
        #expect(table.count == 1)
        #expect(table.stack(for: fingerprint) == "Chromium (BoringSSL)")
    }
}
