/// What a TLS ClientHello tells the proxy before any TLS object exists.
public struct ClientHello: Sendable, Equatable {
    /// The `host_name` from the server_name extension exactly as sent (printable ASCII), or nil if absent.
    public var serverName: String? {
        didSet { validServerName = serverName.flatMap(HostName.validate) }
    }
    /// `serverName` in normal form (`HostName.validate`), or nil when absent or not a host name: validated once, here.
    public private(set) var validServerName: String?
    /// The ALPN protocol names in the client's order, or empty if the extension is absent.
    public var alpnProtocols: [String]
    /// `ClientHello.legacy_version`, 0x0303 for TLS 1.2 and 1.3 clients.
    public var legacyVersion: UInt16
    /// The versions from the supported_versions extension as sent (GREASE values included), or empty if absent.
    public var supportedVersions: [UInt16]
    /// How many bytes of the input the TLS records carrying the ClientHello span.
    public var recordBytes: Int
    /// The cipher suites in the client's order, GREASE left out.
    public var cipherSuites: [UInt16] = []
    /// The extension types in the client's order, GREASE left out.
    public var extensionTypes: [UInt16] = []
    /// The signature_algorithms extension's schemes in the client's order, GREASE left out.
    public var signatureAlgorithms: [UInt16] = []

    /// Creates a ClientHello summary from its parts.
    public init(
        serverName: String?,
        alpnProtocols: [String],
        legacyVersion: UInt16,
        supportedVersions: [UInt16],
        recordBytes: Int
    ) {
        self.serverName = serverName
        validServerName = serverName.flatMap(HostName.validate)
        self.alpnProtocols = alpnProtocols
        self.legacyVersion = legacyVersion
        self.supportedVersions = supportedVersions
        self.recordBytes = recordBytes
    }
}

extension ClientHello {
    /// The hello without the lists only its fingerprint reads (cipher suites, extensions, signature algorithms,
    /// versions): what a connection keeps once its client is identified, its names and ALPN.
    public func withoutFingerprintLists() -> ClientHello {
        var kept = self
        kept.cipherSuites = []
        kept.extensionTypes = []
        kept.signatureAlgorithms = []
        kept.supportedVersions = []
        return kept
    }
}

/// The decision ``ClientHelloParser`` reaches about the first bytes of a tunnel.
public enum ClientHelloParseResult: Sendable, Equatable {
    /// The bytes so far are a valid prefix; call again with more bytes appended.
    case needMoreData
    /// The first byte is not a TLS handshake record (0x16) or the record version major is not 3: relay as a raw tunnel.
    case notTLS
    /// A complete, well-formed ClientHello.
    case clientHello(ClientHello)
    /// TLS-looking but broken; the string is a human reason.
    case malformed(String)
}
