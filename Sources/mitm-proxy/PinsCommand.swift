import ArgumentParser
import Foundation
import MITMPins

/// `mitm-proxy pins`: the pins of certificate files, a live server or the proxy's CA.
struct PinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "Compute pin values (SPKI-SHA256-BASE64) and ready-to-paste pinning snippets.",
        discussion: """
            Reads certificate files (PEM with one or more certificates, or DER), the chain a live server \
            presents (--connect), or the proxy's own CA (--proxy-ca), and prints for each certificate its \
            position, subject, issuer, key, expiry and pin. Exit status: 0 done, 2 bad input.
            """,
        subcommands: [PinsCheckCommand.self]
    )

    @Argument(help: ArgumentHelp("Certificate files: PEM (one or more certificates) or DER.", valueName: "file"))
    var files: [String] = []

    @OptionGroup var live: PinsLiveChainOptions

    @Flag(name: .long, help: "Read the proxy's own CA certificate (ca.pem in --ca-dir).")
    var proxyCA = false

    @Option(name: .long, help: ArgumentHelp("The proxy's CA directory (default: ~/.mitm-proxy); implies --proxy-ca.", valueName: "dir"))
    var caDir: String?

    @Option(name: .long, help: ArgumentHelp("Output: text, json, or a snippet: ats, okhttp, android, trustkit, curl.", valueName: "format"))
    var format: PinsOutputFormat = .text

    @Flag(name: .long, help: "Also print the SHA-256 of each raw public key (what SecKeyCopyExternalRepresentation gives). It is NOT a pin.")
    var rawKey = false

    @Option(name: .long, help: ArgumentHelp("Keep only these certificates: leaf, intermediate, root, or ca (intermediates and roots). Repeatable.", valueName: "position"))
    var only: [PinsPositionChoice] = []

    @Option(name: .long, help: ArgumentHelp("The domain snippets pin (default: the server name, or the leaf's first DNS name).", valueName: "name"))
    var domain: String?

    @Flag(name: .long, help: "Snippets cover subdomains (ATS: one level; OkHttp, Android, TrustKit: all levels).")
    var includeSubdomains = false

    @Option(name: .long, help: ArgumentHelp("When Android and TrustKit stop enforcing the pins (default: one year, or the last pinned certificate's expiry if sooner).", valueName: "yyyy-MM-dd"))
    var expiration: String?

    @Option(name: .long, help: ArgumentHelp("A backup pin to add to snippets (base64 SHA-256). Repeatable.", valueName: "pin"))
    var backupPin: [String] = []

    @Option(name: .long, help: ArgumentHelp("A PEM public key, private key, CSR or certificate whose key becomes a backup pin. Repeatable.", valueName: "file"))
    var backupKey: [String] = []

    mutating func validate() throws {
        if files.isEmpty && live.connect == nil && !proxyCA && caDir == nil {
            throw ValidationError("give certificate files, --connect host[:port], or --proxy-ca")
        }
        if let expiration, PinsTool.parseDay(expiration) == nil {
            throw ValidationError("--expiration must be a date like 2026-12-31")
        }
        if !format.isSnippet && (domain != nil || includeSubdomains || expiration != nil || !backupPin.isEmpty || !backupKey.isEmpty) {
            throw ValidationError("--domain, --include-subdomains, --expiration, --backup-pin and --backup-key shape snippets: add --format ats|okhttp|android|trustkit|curl")
        }
    }

    func run() throws {
        var options = PinsListOptions()
        options.files = files
        options.live = try live.request()
        if proxyCA || caDir != nil { options.proxyCADirectory = caDir ?? CertificateFile.defaultCADirectory }
        options.format = format
        options.rawKey = rawKey
        options.positions = Set(only.flatMap(\.positions))
        options.domain = domain
        options.includeSubdomains = includeSubdomains
        options.expiration = expiration.flatMap(PinsTool.parseDay)
        options.backupPins = backupPin
        options.backupKeyFiles = backupKey
        try PinsOutput.emit(PinsTool.list(options))
    }
}

/// `mitm-proxy pins check`: compare the pins an app ships with a chain.
struct PinsCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check an app's pins (Info.plist or network_security_config.xml) against a chain.",
        discussion: """
            Reads NSAppTransportSecurity > NSPinnedDomains from an Info.plist (XML or binary), or the \
            <pin-set>s of an Android network_security_config.xml, and compares each pinned domain with \
            the chain of a live server (--connect) or certificate files (--cert): which certificate \
            matches which pin, and warnings for rotation risks. Exit status: 0 every domain matches, \
            1 one does not, 2 bad input.
            """
    )

    @Argument(help: ArgumentHelp("The app's Info.plist or network_security_config.xml.", valueName: "config"))
    var configuration: String

    @Option(name: .long, help: ArgumentHelp("A certificate file for the chain (leaf first); with --connect, adds to the served chain (e.g. the root). Repeatable.", valueName: "file"))
    var cert: [String] = []

    @OptionGroup var live: PinsLiveChainOptions

    @Option(name: .long, help: ArgumentHelp("Check only this pinned domain (default: the entry covering the server name, else all). Repeatable.", valueName: "name"))
    var domain: [String] = []

    @Option(name: .long, help: ArgumentHelp("Output: text or json.", valueName: "format"))
    var format: PinsCheckFormat = .text

    mutating func validate() throws {
        if cert.isEmpty && live.connect == nil {
            throw ValidationError("give the chain to compare with: --connect host[:port] or --cert FILE")
        }
    }

    func run() throws {
        var options = PinsCheckOptions(configurationPath: configuration)
        options.files = cert
        options.live = try live.request()
        options.domains = domain
        options.json = format == .json
        try PinsOutput.emit(PinsTool.check(options))
    }
}

/// Output formats of `pins check`.
enum PinsCheckFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

/// `--only` values.
enum PinsPositionChoice: String, ExpressibleByArgument, CaseIterable {
    case leaf, intermediate, root, ca

    var positions: [ChainPosition] {
        switch self {
        case .leaf: return [.leaf]
        case .intermediate: return [.intermediate]
        case .root: return [.root]
        case .ca: return [.intermediate, .root]
        }
    }
}

extension PinsOutputFormat: ExpressibleByArgument {}

/// Printing a `PinsToolResult` and exiting with its status.
enum PinsOutput {
    static func emit(_ result: PinsToolResult) throws {
        if !result.standardOutput.isEmpty { print(result.standardOutput, terminator: "") }
        if !result.standardError.isEmpty { FileHandle.standardError.write(Data(result.standardError.utf8)) }
        if result.exitStatus != 0 { throw ExitCode(result.exitStatus) }
    }
}
