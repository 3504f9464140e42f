/// The fields of a ClientHello handshake body (RFC 8446 §4.1.2) that the proxy needs.
struct ClientHelloBody {
    var legacyVersion: UInt16 = 0
    var serverName: String?
    var alpnProtocols: [String] = []
    var supportedVersions: [UInt16] = []
    /// What the client's fingerprint is made of (GREASE values left out): cipher suites and extension types in
    /// the client's order, and the signature algorithms.
    var cipherSuites: [UInt16] = []
    var extensionTypes: [UInt16] = []
    var signatureAlgorithms: [UInt16] = []

    private static let serverNameExtension: UInt16 = 0
    private static let alpnExtension: UInt16 = 16
    private static let supportedVersionsExtension: UInt16 = 43
    private static let signatureAlgorithmsExtension: UInt16 = 13
    private static let hostNameType: UInt8 = 0

    /// Parses `body`, the bytes after the four-byte handshake header.
    init(parsing body: ArraySlice<UInt8>) throws(ClientHelloMalformed) {
        let parsed = body.withUnsafeBufferPointer { bytes in
            Result { () throws(ClientHelloMalformed) in try Self(borrowing: bytes) }
        }
        self = try parsed.get()
    }

    private init(borrowing body: UnsafeBufferPointer<UInt8>) throws(ClientHelloMalformed) {
        var reader = ClientHelloReader(body)
        legacyVersion = try reader.readUInt16("legacy_version")
        guard legacyVersion >> 8 == 3 else {
            throw ClientHelloMalformed("ClientHello legacy_version \(Self.hex(legacyVersion)) is not SSL 3 or TLS")
        }
        _ = try reader.readBytes(count: 32, "random")
        let sessionID = try reader.readVector8("legacy_session_id")
        guard sessionID.remainingCount <= 32 else {
            throw ClientHelloMalformed("legacy_session_id is \(sessionID.remainingCount) bytes, more than 32")
        }
        var suites = try reader.readVector16("cipher_suites")
        guard suites.remainingCount >= 2, suites.remainingCount.isMultiple(of: 2) else {
            throw ClientHelloMalformed("cipher_suites has an invalid length of \(suites.remainingCount) bytes")
        }
        cipherSuites.reserveCapacity(suites.remainingCount / 2)
        while !suites.isAtEnd {
            let suite = try suites.readUInt16("cipher suite")
            if !TLSGrease.isGrease(suite) { cipherSuites.append(suite) }
        }
        let compressionMethods = try reader.readVector8("legacy_compression_methods")
        guard !compressionMethods.isAtEnd else {
            throw ClientHelloMalformed("legacy_compression_methods is empty")
        }
        if reader.isAtEnd { return }
        var extensions = try reader.readVector16("extensions")
        try reader.expectEnd("the extensions")
        try parseExtensions(&extensions)
    }

    private mutating func parseExtensions(_ extensions: inout ClientHelloReader) throws(ClientHelloMalformed) {
        // A list, not a set: a ClientHello has a few dozen extensions at most, and hashing costs more than the scan.
        var seen: [UInt16] = []
        while !extensions.isAtEnd {
            let type = try extensions.readUInt16("extension type")
            var data = try extensions.readVector16("extension \(type)")
            guard !seen.contains(type) else {
                throw ClientHelloMalformed("extension \(type) appears more than once")
            }
            seen.append(type)
            if !TLSGrease.isGrease(type) { extensionTypes.append(type) }
            switch type {
            case Self.serverNameExtension:
                serverName = try Self.parseServerName(&data)
            case Self.alpnExtension:
                alpnProtocols = try Self.parseALPN(&data)
            case Self.supportedVersionsExtension:
                supportedVersions = try Self.parseSupportedVersions(&data)
            case Self.signatureAlgorithmsExtension:
                signatureAlgorithms = try Self.parseSignatureAlgorithms(&data)
            default:
                break
            }
        }
    }

    /// RFC 6066 §3: a list of (name_type, name); only host_name is defined and it may appear once.
    private static func parseServerName(_ data: inout ClientHelloReader) throws(ClientHelloMalformed) -> String? {
        var names = try data.readVector16("server_name list")
        try data.expectEnd("the server_name list")
        guard !names.isAtEnd else {
            throw ClientHelloMalformed("server_name extension has an empty name list")
        }
        var hostName: String?
        while !names.isAtEnd {
            let nameType = try names.readUInt8("server name type")
            let name = try names.readVector16("server name").remainingBytes()
            guard nameType == hostNameType else { continue }
            guard hostName == nil else {
                throw ClientHelloMalformed("SNI contains more than one host_name")
            }
            hostName = try validatedHostName(name)
        }
        return hostName
    }

    private static func validatedHostName(_ name: UnsafeBufferPointer<UInt8>) throws(ClientHelloMalformed) -> String {
        guard !name.isEmpty else {
            throw ClientHelloMalformed("SNI host_name is empty")
        }
        if name.contains(where: { $0 >= 0x80 }) {
            throw ClientHelloMalformed("SNI contains non-ASCII bytes")
        }
        if name.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw ClientHelloMalformed("SNI contains spaces or control characters")
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// RFC 7301 §3.1: a non-empty list of non-empty protocol names.
    private static func parseALPN(_ data: inout ClientHelloReader) throws(ClientHelloMalformed) -> [String] {
        var list = try data.readVector16("ALPN protocol list")
        try data.expectEnd("the ALPN protocol list")
        guard !list.isAtEnd else {
            throw ClientHelloMalformed("ALPN extension has an empty protocol list")
        }
        var protocols: [String] = []
        while !list.isAtEnd {
            let name = try list.readVector8("ALPN protocol name").remainingBytes()
            guard !name.isEmpty else {
                throw ClientHelloMalformed("ALPN list contains an empty protocol name")
            }
            let text = String(decoding: name, as: UTF8.self)
            guard text.utf8.elementsEqual(name) else {
                throw ClientHelloMalformed("ALPN protocol name is not valid UTF-8")
            }
            protocols.append(text)
        }
        return protocols
    }

    /// RFC 8446 §4.2.1: a one-byte-length list of at least one two-byte version.
    private static func parseSupportedVersions(_ data: inout ClientHelloReader) throws(ClientHelloMalformed) -> [UInt16]
    {
        var list = try data.readVector8("supported_versions list")
        try data.expectEnd("the supported_versions list")
        guard list.remainingCount >= 2, list.remainingCount.isMultiple(of: 2) else {
            throw ClientHelloMalformed("supported_versions list has an invalid length of \(list.remainingCount) bytes")
        }
        var versions: [UInt16] = []
        while !list.isAtEnd {
            versions.append(try list.readUInt16("supported version"))
        }
        return versions
    }

    /// RFC 8446 §4.2.3: a two-byte-length list of two-byte schemes (GREASE left out).
    private static func parseSignatureAlgorithms(_ data: inout ClientHelloReader) throws(ClientHelloMalformed)
        -> [UInt16]
    {
        var list = try data.readVector16("signature_algorithms list")
        guard list.remainingCount.isMultiple(of: 2) else {
            throw ClientHelloMalformed(
                "signature_algorithms list has an invalid length of \(list.remainingCount) bytes")
        }
        var schemes: [UInt16] = []
        while !list.isAtEnd {
            let scheme = try list.readUInt16("signature scheme")
            if !TLSGrease.isGrease(scheme) { schemes.append(scheme) }
        }
        return schemes
    }

    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
