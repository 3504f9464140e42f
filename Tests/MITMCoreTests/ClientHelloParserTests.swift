import Testing

@testable import MITMCore

@Suite struct ClientHelloParserTests {
    private func expectedHello(recordBytes: Int) -> ClientHello {
        var hello = ClientHello(
            serverName: "a.example",
            alpnProtocols: ["h2", "http/1.1"],
            legacyVersion: 0x0303,
            supportedVersions: [0x0304, 0x0303],
            recordBytes: recordBytes
        )
        hello.cipherSuites = [0x1301, 0x1302, 0xC02F]
        hello.extensionTypes = [0x0000, 0x000A, 0x0010, 0x002B]
        return hello
    }

    @Test func parsesServerNameALPNAndVersions() {
        let bytes = ClientHelloBuilder.typical().records()
        #expect(ClientHelloParser.parse(bytes) == .clientHello(expectedHello(recordBytes: bytes.count)))
    }

    @Test func aConnectionKeepsOnlyTheNamesAndALPNOfItsHello() {
        let kept = expectedHello(recordBytes: 200).withoutFingerprintLists()
        #expect(
            kept.serverName == "a.example" && kept.validServerName == "a.example"
                && kept.alpnProtocols == ["h2", "http/1.1"])
        #expect(
            kept.cipherSuites.isEmpty && kept.extensionTypes.isEmpty && kept.signatureAlgorithms.isEmpty
                && kept.supportedVersions.isEmpty)
    }

    @Test func reportsAbsentExtensionsAsEmpty() {
        var builder = ClientHelloBuilder()
        builder.legacyVersion = 0x0301
        builder.omitsExtensionsBlock = true
        let bytes = builder.records()
        var expected = ClientHello(
            serverName: nil, alpnProtocols: [], legacyVersion: 0x0301, supportedVersions: [], recordBytes: bytes.count)
        expected.cipherSuites = [0x1301, 0x1302, 0xC02F]
        #expect(ClientHelloParser.parse(bytes) == .clientHello(expected))
    }

    @Test func keepsServerNameExactlyAsSent() {
        let bytes = ClientHelloBuilder.typical(serverName: "Mixed.Example.COM.").records()
        guard case .clientHello(let hello) = ClientHelloParser.parse(bytes) else {
            Issue.record("expected a ClientHello")
            return
        }
        #expect(hello.serverName == "Mixed.Example.COM.")
    }

    @Test(arguments: [1, 2, 7, 100, 16_384])
    func reassemblesAcrossRecords(fragmentSize: Int) {
        let bytes = ClientHelloBuilder.typical().records(fragmentSize: fragmentSize)
        #expect(ClientHelloParser.parse(bytes) == .clientHello(expectedHello(recordBytes: bytes.count)))
    }

    @Test(arguments: [3, 50, 16_384])
    func everyProperPrefixNeedsMoreData(fragmentSize: Int) {
        let bytes = ClientHelloBuilder.typical().records(fragmentSize: fragmentSize)
        for end in 0..<bytes.count where ClientHelloParser.parse(bytes[..<end]) != .needMoreData {
            Issue.record("prefix of \(end) bytes gave \(ClientHelloParser.parse(bytes[..<end]))")
        }
    }

    @Test func acceptsSlicesThatDoNotStartAtZero() {
        let bytes = ClientHelloBuilder.typical().records(fragmentSize: 40)
        let shifted = ([0xFF, 0xEE, 0xDD] + bytes)[3...]
        #expect(ClientHelloParser.parse(shifted) == .clientHello(expectedHello(recordBytes: bytes.count)))
    }

    @Test func recordBytesExcludesWhatFollowsTheClientHello() {
        let hello = ClientHelloBuilder.typical().records(fragmentSize: 64)
        let earlyData = ClientHelloBuilder.record([1, 2, 3, 4], contentType: 0x17, version: 0x0303)
        #expect(ClientHelloParser.parse(hello + earlyData) == .clientHello(expectedHello(recordBytes: hello.count)))
    }

    @Test(arguments: [UInt16(0x0300), 0x0301, 0x0303, 0x03FF])
    func acceptsAnyRecordMinorVersion(version: UInt16) {
        let bytes = ClientHelloBuilder.typical().records(recordVersion: version)
        #expect(ClientHelloParser.parse(bytes) == .clientHello(expectedHello(recordBytes: bytes.count)))
    }

    @Test func keepsGREASEAndUnknownExtensions() {
        var builder = ClientHelloBuilder()
        builder.addExtension(type: 0x0A0A, data: [])
        builder.addSupportedVersions([0x1A1A, 0x0304])
        builder.addExtension(type: 0xFFFF, data: Array(repeating: 7, count: 300))
        guard case .clientHello(let hello) = ClientHelloParser.parse(builder.records()) else {
            Issue.record("expected a ClientHello")
            return
        }
        #expect(hello.supportedVersions == [0x1A1A, 0x0304])
        #expect(hello.serverName == nil)
    }

    @Test func emptyInputNeedsMoreData() {
        #expect(ClientHelloParser.parse([]) == .needMoreData)
        #expect(ClientHelloParser.parse([0x16]) == .needMoreData)
    }

    @Test(arguments: [
        Array("GET / HTTP/1.1\r\n".utf8),
        Array("G".utf8),
        Array("CONNECT".utf8),
        [0x80, 0x2E, 0x01, 0x00, 0x02],
        [0x17, 0x03, 0x03],
        [0x16, 0x02],
        [0x16, 0x04, 0x01, 0x00, 0x10],
    ])
    func recognisesNonTLSFromTheFirstBytes(bytes: [UInt8]) {
        #expect(ClientHelloParser.parse(bytes) == .notTLS)
    }

    @Test func decidesOversizedRecordFromItsHeaderAlone() {
        #expect(ClientHelloParser.parse([0x16, 0x03, 0x01, 0x41, 0x00]) == .needMoreData)
        guard case .malformed(let reason) = ClientHelloParser.parse([0x16, 0x03, 0x01, 0x41, 0x01]) else {
            Issue.record("a 16641-byte record must be malformed")
            return
        }
        #expect(reason.contains("16641"))
    }

    @Test func decidesOversizedHandshakeFromItsHeaderAlone() {
        let header = ClientHelloBuilder.record([0x01, 0x01, 0x00, 0x00])
        #expect(ClientHelloParser.parse(Array(header.prefix(9))) == .needMoreData)
        let fits: [UInt8] = [0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x01, 0x00, 0x00]
        #expect(ClientHelloParser.parse(fits) == .needMoreData)
        let tooLong: [UInt8] = [0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x01, 0x00, 0x01]
        guard case .malformed(let reason) = ClientHelloParser.parse(tooLong) else {
            Issue.record("a 65537-byte handshake must be malformed")
            return
        }
        #expect(reason.contains("65537"))
    }

    @Test func namesTheWrongHandshakeType() {
        let serverHello = ClientHelloBuilder.records(ClientHelloBuilder.typical().handshakeMessage(type: 2))
        #expect(
            ClientHelloParser.parse(Array(serverHello.prefix(6)))
                == .malformed("handshake message is not a ClientHello (type 2)"))
    }

    @Test func rejectsNonASCIIServerName() {
        let bytes = ClientHelloBuilder.typical(serverName: "bücher.example").records()
        #expect(ClientHelloParser.parse(bytes) == .malformed("SNI contains non-ASCII bytes"))
    }

    @Test(arguments: ["a example", "a\texample", "a\u{7F}b", ""])
    func rejectsServerNamesWithSpacesControlsOrNothing(name: String) {
        let bytes = ClientHelloBuilder.typical(serverName: name).records()
        guard case .malformed(let reason) = ClientHelloParser.parse(bytes) else {
            Issue.record("SNI \(name.debugDescription) must be malformed")
            return
        }
        #expect(reason.contains("SNI"))
    }

    @Test func rejectsEmptyALPNEntries() {
        let bytes = ClientHelloBuilder.typical(alpn: ["h2", "", "http/1.1"]).records()
        #expect(ClientHelloParser.parse(bytes) == .malformed("ALPN list contains an empty protocol name"))
    }

    @Test func rejectsNonUTF8ALPNNames() {
        var builder = ClientHelloBuilder()
        builder.addALPN(bytes: [[0xFF, 0xFE]])
        #expect(ClientHelloParser.parse(builder.records()) == .malformed("ALPN protocol name is not valid UTF-8"))
    }

    static let brokenHellos: [(String, ClientHelloBuilder)] = {
        var cases: [(String, ClientHelloBuilder)] = []
        func add(_ reason: String, _ change: (inout ClientHelloBuilder) -> Void) {
            var builder = ClientHelloBuilder.typical()
            change(&builder)
            cases.append((reason, builder))
        }
        add("more than once") { $0.addALPN(["h2"]) }
        add("empty protocol list") { $0.extensions[2] = (16, [0, 0]) }
        add("empty name list") { $0.extensions[0] = (0, [0, 0]) }
        add("more than one host_name") {
            $0.extensions[0] = (0, ClientHelloBuilder.vector16([0, 0, 1, 0x61, 0, 0, 1, 0x62]))
        }
        add("server name needs") { $0.extensions[0] = (0, [0, 4, 0, 0, 9, 0x61]) }
        add("after the server_name list") { $0.extensions[0].data += [0] }
        add("supported_versions list has an invalid length") { $0.extensions[3] = (43, [3, 3, 4, 3]) }
        add("legacy_session_id is 33 bytes") { $0.sessionID = Array(repeating: 1, count: 33) }
        add("cipher_suites has an invalid length") { $0.cipherSuites = [] }
        add("legacy_compression_methods is empty") { $0.compressionMethods = [] }
        add("is not SSL 3 or TLS") { $0.legacyVersion = 0x0200 }
        add("after the extensions") { $0.bodySuffix = [0] }
        add("extensions length needs") {
            $0.omitsExtensionsBlock = true
            $0.bodySuffix = [0x01]
        }
        return cases
    }()

    @Test(arguments: brokenHellos)
    func rejectsBrokenFields(expectedReason: String, builder: ClientHelloBuilder) {
        guard case .malformed(let reason) = ClientHelloParser.parse(builder.records(fragmentSize: 37)) else {
            Issue.record("expected malformed containing \(expectedReason.debugDescription)")
            return
        }
        #expect(reason.contains(expectedReason), "\(reason)")
    }

    @Test func rejectsOddCipherSuitesLength() {
        var body = ClientHelloBuilder().body()
        body[2 + 32 + 33 + 1] = 5
        #expect(
            ClientHelloParser.parse(
                ClientHelloBuilder.records(ClientHelloBuilder.handshakeMessage(type: 1, body: body)))
                == .malformed("cipher_suites has an invalid length of 5 bytes"))
    }

    @Test func rejectsOtherContentTypesInsideTheClientHello() {
        let message = ClientHelloBuilder.typical().handshakeMessage()
        let alert = ClientHelloBuilder.record([2, 40], contentType: 0x15)
        let bytes = ClientHelloBuilder.records(Array(message.prefix(20))) + alert
        guard case .malformed(let reason) = ClientHelloParser.parse(bytes) else {
            Issue.record("an alert inside the ClientHello must be malformed")
            return
        }
        #expect(reason.contains("content type 21"))
    }

    @Test func rejectsEmptyRecords() {
        let message = ClientHelloBuilder.typical().handshakeMessage()
        let bytes = ClientHelloBuilder.records(Array(message.prefix(20))) + ClientHelloBuilder.record([])
        #expect(ClientHelloParser.parse(bytes) == .malformed("empty handshake record"))
    }

    @Test func rejectsRecordsThatRunPastTheClientHello() {
        let message = ClientHelloBuilder.typical().handshakeMessage() + [0x0E, 0, 0, 0]
        let bytes = ClientHelloBuilder.records(message)
        #expect(
            ClientHelloParser.parse(Array(bytes.prefix(bytes.count - 10)))
                == .malformed("a handshake record continues past the end of the ClientHello"))
    }
}
