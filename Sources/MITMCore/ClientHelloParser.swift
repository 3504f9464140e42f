/// Decides from the first bytes of a tunnel whether the client speaks TLS and, if so, what its ClientHello asks for.
///
/// Sans-io: feed everything received so far; on ``ClientHelloParseResult/needMoreData`` append more bytes and call again.
package enum ClientHelloParser {
    /// Largest record fragment accepted: 2^14 plus the 256 bytes of expansion TLS 1.2 allows.
    static let maxRecordLength = 16_384 + 256
    /// Largest ClientHello handshake body accepted.
    static let maxHandshakeLength = 65_536

    private static let handshakeContentType: UInt8 = 0x16
    private static let clientHelloType: UInt8 = 1
    private static let recordHeaderLength = 5
    private static let handshakeHeaderLength = 4

    /// Parses the bytes received so far.
    package static func parse(_ bytes: [UInt8]) -> ClientHelloParseResult {
        parse(bytes[...])
    }

    /// Parses the bytes received so far.
    package static func parse(_ bytes: ArraySlice<UInt8>) -> ClientHelloParseResult {
        guard let first = bytes.first else { return .needMoreData }
        guard first == handshakeContentType else { return .notTLS }
        if bytes.count >= 2, bytes[bytes.startIndex + 1] != 3 { return .notTLS }
        do {
            return try parseRecords(bytes)
        } catch {
            return .malformed(error.reason)
        }
    }

    /// Walks the handshake records, reassembling the handshake message and rejecting problems as early as the bytes allow.
    private static func parseRecords(_ bytes: ArraySlice<UInt8>) throws(ClientHelloMalformed) -> ClientHelloParseResult
    {
        var handshake: [UInt8] = []
        var recordStart = bytes.startIndex
        while true {
            let header = bytes[recordStart..<min(recordStart + recordHeaderLength, bytes.endIndex)]
            try checkRecordHeader(header)
            guard header.count == recordHeaderLength else { return .needMoreData }
            let length = Int(header[recordStart + 3]) << 8 | Int(header[recordStart + 4])
            let fragmentStart = recordStart + recordHeaderLength
            let fragmentEnd = fragmentStart + length
            let receivedEnd = min(fragmentEnd, bytes.endIndex)
            let lengthBeforeRecord = handshake.count
            handshake.append(contentsOf: bytes[fragmentStart..<receivedEnd])
            guard let messageLength = try checkHandshakeHeader(handshake) else {
                if receivedEnd < fragmentEnd { return .needMoreData }
                recordStart = fragmentEnd
                continue
            }
            if lengthBeforeRecord + length > messageLength {
                throw ClientHelloMalformed("a handshake record continues past the end of the ClientHello")
            }
            if receivedEnd < fragmentEnd { return .needMoreData }
            if handshake.count == messageLength {
                let body = try ClientHelloBody(parsing: handshake[handshakeHeaderLength...])
                var hello = ClientHello(
                    serverName: body.serverName,
                    alpnProtocols: body.alpnProtocols,
                    legacyVersion: body.legacyVersion,
                    supportedVersions: body.supportedVersions,
                    recordBytes: fragmentEnd - bytes.startIndex
                )
                hello.cipherSuites = body.cipherSuites
                hello.extensionTypes = body.extensionTypes
                hello.signatureAlgorithms = body.signatureAlgorithms
                return .clientHello(hello)
            }
            recordStart = fragmentEnd
        }
    }

    /// Checks as much of a record header as has arrived; the first record's type and version were checked by `parse`.
    private static func checkRecordHeader(_ header: ArraySlice<UInt8>) throws(ClientHelloMalformed) {
        let start = header.startIndex
        if header.count >= 1, header[start] != handshakeContentType {
            throw ClientHelloMalformed(
                "a record of content type \(header[start]) arrived before the ClientHello was complete")
        }
        if header.count >= 2, header[start + 1] != 3 {
            throw ClientHelloMalformed("a record of the ClientHello has version major \(header[start + 1]), not 3")
        }
        guard header.count == recordHeaderLength else { return }
        let length = Int(header[start + 3]) << 8 | Int(header[start + 4])
        if length > maxRecordLength {
            throw ClientHelloMalformed("TLS record length \(length) exceeds \(maxRecordLength)")
        }
        if length == 0 {
            throw ClientHelloMalformed("empty handshake record")
        }
    }

    /// Validates the handshake header once its bytes are in; returns the whole message length (header included) when known.
    private static func checkHandshakeHeader(_ handshake: [UInt8]) throws(ClientHelloMalformed) -> Int? {
        guard let type = handshake.first else { return nil }
        guard type == clientHelloType else {
            throw ClientHelloMalformed("handshake message is not a ClientHello (type \(type))")
        }
        guard handshake.count >= handshakeHeaderLength else { return nil }
        let bodyLength = Int(handshake[1]) << 16 | Int(handshake[2]) << 8 | Int(handshake[3])
        if bodyLength > maxHandshakeLength {
            throw ClientHelloMalformed("ClientHello length \(bodyLength) exceeds \(maxHandshakeLength)")
        }
        return handshakeHeaderLength + bodyLength
    }
}
