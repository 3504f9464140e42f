import ArgumentParser
import Foundation
import MITMPins

/// `mitm-proxy pins`: compute pin values, or check the pins an app ships.
struct PinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "Compute pin values (SPKI-SHA256-BASE64) and snippets, or check an app's pins.",
        discussion: "`mitm-proxy pins FILE...` is short for `mitm-proxy pins show FILE...`.",
        subcommands: [PinsShowCommand.self, PinsCheckCommand.self],
        defaultSubcommand: PinsShowCommand.self
    )
}

/// `mitm-proxy pins [show]`: the pins of certificate files, a live server or the proxy's CA.
struct PinsShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print each certificate's position, subject, issuer, key, expiry and pin, or a pinning snippet.",
        discussion: """
            Reads certificate files (PEM with one or more certificates, or DER), the chain a live server \
            presents (--connect), or the proxy's own CA (--proxy-ca). Exit status: 0 done, 2 bad input.
            """
    )

    @Argument(help: ArgumentHelp("Certificate files: PEM (one or more certificates) or DER.", valueName: "file"))
    var files: [String] = []

    @OptionGroup var live: PinsLiveChainOptions

    @Flag(name: .long, help: "Read the proxy's own CA certificate (ca.pem in --ca-dir).")
    var proxyCA = false

    @Option(
        name: .long,
        help: ArgumentHelp("The proxy's CA directory (default: ~/.mitm-proxy); implies --proxy-ca.", valueName: "dir"))
    var caDir: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Output: text, json, or a snippet: ats, okhttp, android, trustkit, curl.", valueName: "format"))
    var format: PinsOutputFormat = .text

    @Flag(
        name: .long,
        help:
            "Also print the SHA-256 of each raw public key (what SecKeyCopyExternalRepresentation gives). It is NOT a pin."
    )
    var rawKey = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep only these certificates: leaf, intermediate, root, or ca (intermediates and roots). Repeatable.",
            valueName: "position"))
    var only: [PinsPositionChoice] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The domain snippets pin (default: the server name, or the leaf's first DNS name).", valueName: "name"))
    var domain: String?

    @Flag(name: .long, help: "Snippets cover subdomains (ATS: one level; OkHttp, Android, TrustKit: all levels).")
    var includeSubdomains = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "When Android and TrustKit stop enforcing the pins (default: one year, or the last pinned certificate's expiry if sooner).",
            valueName: "yyyy-MM-dd"))
    var expiration: String?

    @Option(
        name: .long,
        help: ArgumentHelp("A backup pin to add to snippets (base64 SHA-256). Repeatable.", valueName: "pin"))
    var backupPin: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A PEM public key, private key, CSR or certificate whose key becomes a backup pin. Repeatable.",
            valueName: "file"))
    var backupKey: [String] = []

    mutating func validate() throws {
        if files.isEmpty && live.connect == nil && !proxyCA && caDir == nil {
            throw ValidationError("give certificate files, --connect host[:port], or --proxy-ca")
        }
        if let expiration, PinsTool.parseDay(expiration) == nil {
            throw ValidationError("--expiration must be a date like 2026-12-31")
        }
        if !format.isSnippet
            && (domain != nil || includeSubdomains || expiration != nil || !backupPin.isEmpty || !backupKey.isEmpty)
        {
            throw ValidationError(
                "--domain, --include-subdomains, --expiration, --backup-pin and --backup-key shape snippets: add --format ats|okhttp|android|trustkit|curl"
            )
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
