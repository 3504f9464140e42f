import Foundation
import MITMTLS

/// What `mitm-proxy pins` and `mitm-proxy pins check` print, and the status they exit with.
public struct PinsToolResult: Sendable, Equatable {
    /// Text for standard output.
    public var standardOutput: String
    /// Text for standard error: warnings, or the error that stopped the command.
    public var standardError: String
    /// 0 success (check: every domain matches), 1 a domain does not match, 2 bad input.
    public var exitStatus: Int32

    /// A result.
    public init(standardOutput: String = "", standardError: String = "", exitStatus: Int32 = 0) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.exitStatus = exitStatus
    }

    /// The result for an input error: the message on standard error, status 2.
    public init(error: PinsError) {
        self.init(standardError: "error: \(error.message)\n", exitStatus: 2)
    }
}

/// Options of `mitm-proxy pins`.
public struct PinsListOptions: Sendable {
    /// Certificate files (PEM with one or more certificates, or DER).
    public var files: [String] = []
    /// A live server whose chain to read.
    public var live: LiveChainRequest?
    /// The proxy's CA directory, when its `ca.pem` is wanted.
    public var proxyCADirectory: String?
    /// What to print.
    public var format: PinsOutputFormat = .text
    /// Also print the SHA-256 of each raw public key (which is not a pin).
    public var rawKey = false
    /// Keep only certificates at these positions; empty keeps all.
    public var positions: Set<ChainPosition> = []
    /// The domain for snippets; nil takes the server name or the leaf's first DNS name.
    public var domain: String?
    /// Whether snippets cover subdomains.
    public var includeSubdomains = false
    /// The Android/TrustKit pin expiration; nil takes the default (see `defaultExpiration`).
    public var expiration: Date?
    /// Backup pins for snippets, as base64 values.
    public var backupPins: [String] = []
    /// Files whose public key gives a backup pin (public key, private key, CSR or certificate PEM).
    public var backupKeyFiles: [String] = []
    /// The time days are counted from.
    public var now = Date()

    /// Default options: text, nothing selected.
    public init() {}
}

/// Options of `mitm-proxy pins check`.
public struct PinsCheckOptions: Sendable {
    /// The app's `Info.plist` or `network_security_config.xml`.
    public var configurationPath: String
    /// Certificate files forming (or completing) the chain.
    public var files: [String] = []
    /// A live server whose chain to compare with.
    public var live: LiveChainRequest?
    /// Pinned domains to check; empty chooses by the server name, or checks all.
    public var domains: [String] = []
    /// JSON instead of text.
    public var json = false
    /// The time expiry is judged at.
    public var now = Date()

    /// Options for checking `configurationPath`.
    public init(configurationPath: String) {
        self.configurationPath = configurationPath
    }
}

/// The `pins` commands as functions: the CLI only parses arguments and prints the result.
public enum PinsTool {
    /// `mitm-proxy pins`: describe certificates and print their pins in `options.format`.
    public static func list(_ options: PinsListOptions) -> PinsToolResult {
        do throws(PinsError) {
            let everything = try readChains(options)
            var chains = everything
            if !options.positions.isEmpty {
                chains = chains.map { chain in
                    CertificateChain(
                        source: chain.source, served: chain.served,
                        elements: chain.elements.filter { options.positions.contains($0.position) })
                }
            }
            switch options.format {
            case .text:
                return PinsToolResult(standardOutput: ChainReport.text(chains, rawKey: options.rawKey))
            case .json:
                return PinsToolResult(
                    standardOutput: ChainReport.json(chains, rawKey: options.rawKey, now: options.now))
            case .ats, .okhttp, .android, .trustkit, .curl:
                return try snippet(options, chains: chains, domainCandidates: everything.flatMap(\.elements))
            }
        } catch {
            return PinsToolResult(error: error)
        }
    }

    /// `mitm-proxy pins check`: compare an app's pins with a chain; exit 0 all match, 1 not, 2 bad input.
    public static func check(_ options: PinsCheckOptions) -> PinsToolResult {
        do throws(PinsError) {
            let configuration = try AppPinConfiguration.read(options.configurationPath)
            var parts: [CertificateChain] = []
            if let live = options.live {
                parts.append(
                    try CertificateChain(
                        source: live.sourceDescription, certificates: live.fetch(), served: true, now: options.now))
            }
            for path in options.files {
                parts.append(
                    try CertificateChain(
                        source: path, certificates: CertificateFile.read(path), served: false, now: options.now))
            }
            guard !parts.isEmpty else {
                throw PinsError("no chain to compare with: pass --connect host[:port] or --cert FILE")
            }
            let chain = parts.count == 1 ? parts[0] : CertificateChain(joining: parts)
            let (domains, note) = try select(
                configuration, names: options.domains, serverName: options.live?.effectiveServerName)
            let checks = domains.map {
                PinChecker.check($0, kind: configuration.kind, against: chain, now: options.now)
            }
            let report = PinCheckReport(
                configuration: configuration, chain: chain, selectionNote: note, domains: checks)
            return PinsToolResult(
                standardOutput: options.json ? report.json : report.text, exitStatus: report.exitStatus)
        } catch {
            return PinsToolResult(error: error)
        }
    }

    /// The Android pin-set expiration used when none is given: one year from `now`, or sooner when
    /// every pinned certificate ends before that.
    public static func defaultExpiration(for elements: [ChainElement], now: Date) -> Date {
        let year = now.addingTimeInterval(365 * 86_400)
        guard let latest = elements.map(\.notAfter).max() else { return year }
        return min(year, max(latest, now.addingTimeInterval(86_400)))
    }

    private static func readChains(_ options: PinsListOptions) throws(PinsError) -> [CertificateChain] {
        var chains: [CertificateChain] = []
        for path in options.files {
            chains.append(
                try CertificateChain(
                    source: path, certificates: CertificateFile.read(path), served: false, now: options.now))
        }
        if let live = options.live {
            chains.append(
                try CertificateChain(
                    source: live.sourceDescription, certificates: live.fetch(), served: true, now: options.now))
        }
        if let directory = options.proxyCADirectory {
            let certificates = try CertificateFile.proxyCA(directory: directory)
            let path = CertificateAuthorityFiles(directory: directory).certificatePEM
            chains.append(
                try CertificateChain(
                    source: "proxy CA \(path)", certificates: certificates, served: false, now: options.now))
        }
        guard !chains.isEmpty else {
            throw PinsError("nothing to read: pass certificate files, --connect host[:port], or --proxy-ca")
        }
        return chains
    }

    /// The snippet for the pins of `chains`; the domain, when not given, comes from `domainCandidates`
    /// (every certificate read, so that `--only ca` still finds the leaf's name).
    private static func snippet(
        _ options: PinsListOptions, chains: [CertificateChain], domainCandidates: [ChainElement]
    ) throws(PinsError) -> PinsToolResult {
        let elements = chains.flatMap(\.elements)
        var pins = elements.sorted { ($0.position.isCA ? 1 : 0) < ($1.position.isCA ? 1 : 0) }.map(SnippetPin.init)
        let backupsAreCA = !elements.contains { $0.position == .leaf } && !elements.isEmpty
        for value in options.backupPins {
            pins.append(SnippetPin(backup: try BackupPin.validated(value), isCA: backupsAreCA))
        }
        for path in options.backupKeyFiles {
            pins.append(
                SnippetPin(backup: try BackupPin.pin(ofKeyFile: path), isCA: backupsAreCA, note: "backup key \(path)"))
        }
        guard !pins.isEmpty else { throw PinsError("no certificate left to pin after --only") }
        var notes: [String] = []
        let domain =
            options.domain ?? inferredDomain(options, elements: domainCandidates)
            ?? {
                notes.append("no domain name known: the snippet uses example.com; pass --domain")
                return "example.com"
            }()
        let request = SnippetRequest(
            domain: domain,
            includeSubdomains: options.includeSubdomains,
            pins: pins,
            expiration: options.expiration ?? defaultExpiration(for: elements, now: options.now),
            expirationGiven: options.expiration != nil
        )
        let warnings = notes + PinSnippets.warnings(options.format, request)
        return PinsToolResult(
            standardOutput: PinSnippets.render(options.format, request),
            standardError: warnings.map { "warning: \($0)\n" }.joined())
    }

    private static func inferredDomain(_ options: PinsListOptions, elements: [ChainElement]) -> String? {
        if let name = options.live?.effectiveServerName { return name }
        guard let leaf = elements.first(where: { $0.position == .leaf }) else { return nil }
        if let name = leaf.dnsNames.first {
            return name.hasPrefix("*.") ? String(name.dropFirst(2)) : name
        }
        return DistinguishedNameText.commonName(leaf.subject)
    }

    private static func select(_ configuration: AppPinConfiguration, names: [String], serverName: String?)
        throws(PinsError) -> ([PinnedDomain], String?)
    {
        if !names.isEmpty {
            var chosen: [PinnedDomain] = []
            for name in names {
                let found = configuration.domains.filter { $0.name.lowercased() == name.lowercased() }
                guard !found.isEmpty else {
                    let known = configuration.domains.map(\.name).joined(separator: ", ")
                    throw PinsError("\(configuration.path) pins no domain \(name); it pins: \(known)")
                }
                chosen += found
            }
            return (chosen, nil)
        }
        if let serverName {
            let covering = configuration.domains(covering: serverName)
            if !covering.isEmpty && covering.count < configuration.domains.count {
                let names = covering.map(\.name).joined(separator: ", ")
                return (
                    covering,
                    "Checking the entry that applies to \(serverName) (\(names)); pass --domain to choose others."
                )
            }
        }
        return (configuration.domains, nil)
    }
}

/// Reading a common name back out of the `CN=..., O=...` subject text.
enum DistinguishedNameText {
    static func commonName(_ subject: String) -> String? {
        subject.components(separatedBy: ", ").first { $0.hasPrefix("CN=") }.map { String($0.dropFirst(3)) }
    }
}

extension PinsTool {
    /// The start (UTC) of a `yyyy-MM-dd` day, as `--expiration` takes it; nil when `text` is not one.
    public static func parseDay(_ text: String) -> Date? {
        DateText.parseDay(text)
    }
}
