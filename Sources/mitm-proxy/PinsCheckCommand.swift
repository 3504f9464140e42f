import ArgumentParser
import MITMPins

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

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A certificate file for the chain (leaf first); with --connect, adds to the served chain (e.g. the root). Repeatable.",
            valueName: "file"))
    var cert: [String] = []

    @OptionGroup var live: PinsLiveChainOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Check only this pinned domain (default: the entry covering the server name, else all). Repeatable.",
            valueName: "name"))
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
