import ArgumentParser
import MITMProxy

/// The `mitm-proxy` root command.
struct MITMProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mitm-proxy",
        abstract: "A local man-in-the-middle proxy that proves whether certificate pinning holds.",
        version: LibraryVersions.summary,
        subcommands: [PinsCommand.self]
    )
}
