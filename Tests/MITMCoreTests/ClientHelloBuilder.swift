/// Builds ClientHello bytes for tests, field by field, so each test can break exactly one thing.
struct ClientHelloBuilder {
    var legacyVersion: UInt16 = 0x0303
    var random: [UInt8] = Array(0..<32)
    var sessionID: [UInt8] = Array(repeating: 0xAB, count: 32)
    var cipherSuites: [UInt16] = [0x1301, 0x1302, 0xC02F]
    var compressionMethods: [UInt8] = [0]
    var extensions: [(type: UInt16, data: [UInt8])] = []
    /// Leaves out the extensions block entirely, as pre-TLS 1.2 clients may.
    var omitsExtensionsBlock = false
    /// Raw bytes appended after the extensions block.
    var bodySuffix: [UInt8] = []

    /// A typical modern ClientHello: SNI, ALPN and TLS 1.3 supported_versions.
    static func typical(serverName: String = "a.example", alpn: [String] = ["h2", "http/1.1"]) -> ClientHelloBuilder {
        var builder = ClientHelloBuilder()
        builder.addServerName(serverName)
        builder.addExtension(type: 10, data: vector16([0x00, 0x1D, 0x00, 0x17]))
        builder.addALPN(alpn)
        builder.addSupportedVersions([0x0304, 0x0303])
        return builder
    }

    mutating func addExtension(type: UInt16, data: [UInt8]) {
        extensions.append((type, data))
    }

    mutating func addServerName(_ name: String) {
        addServerName(bytes: Array(name.utf8))
    }

    mutating func addServerName(bytes: [UInt8]) {
        addExtension(type: 0, data: Self.vector16([0] + Self.vector16(bytes)))
    }

    mutating func addALPN(_ protocols: [String]) {
        addALPN(bytes: protocols.map { Array($0.utf8) })
    }

    mutating func addALPN(bytes protocols: [[UInt8]]) {
        addExtension(type: 16, data: Self.vector16(protocols.flatMap(Self.vector8)))
    }

    mutating func addSupportedVersions(_ versions: [UInt16]) {
        addExtension(type: 43, data: Self.vector8(versions.flatMap(Self.uint16)))
    }

    func body() -> [UInt8] {
        var body = Self.uint16(legacyVersion) + random + Self.vector8(sessionID)
        body += Self.vector16(cipherSuites.flatMap(Self.uint16)) + Self.vector8(compressionMethods)
        if !omitsExtensionsBlock {
            body += Self.vector16(extensions.flatMap { Self.uint16($0.type) + Self.vector16($0.data) })
        }
        return body + bodySuffix
    }

    func handshakeMessage(type: UInt8 = 1) -> [UInt8] {
        Self.handshakeMessage(type: type, body: body())
    }

    /// The handshake message in one record, or split into records of at most `fragmentSize` bytes.
    func records(fragmentSize: Int = 16_384, recordVersion: UInt16 = 0x0301) -> [UInt8] {
        Self.records(handshakeMessage(), fragmentSize: fragmentSize, recordVersion: recordVersion)
    }

    static func handshakeMessage(type: UInt8, body: [UInt8]) -> [UInt8] {
        [type] + uint24(body.count) + body
    }

    static func records(_ message: [UInt8], fragmentSize: Int = 16_384, recordVersion: UInt16 = 0x0301) -> [UInt8] {
        stride(from: 0, to: message.count, by: fragmentSize).flatMap { start in
            record(Array(message[start..<min(start + fragmentSize, message.count)]), version: recordVersion)
        }
    }

    static func record(_ fragment: [UInt8], contentType: UInt8 = 0x16, version: UInt16 = 0x0301) -> [UInt8] {
        [contentType] + uint16(version) + uint16(UInt16(fragment.count)) + fragment
    }

    static func uint16(_ value: UInt16) -> [UInt8] {
        [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    static func uint24(_ value: Int) -> [UInt8] {
        [UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func vector8(_ contents: [UInt8]) -> [UInt8] {
        [UInt8(contents.count)] + contents
    }

    static func vector16(_ contents: [UInt8]) -> [UInt8] {
        uint16(UInt16(contents.count)) + contents
    }
}
