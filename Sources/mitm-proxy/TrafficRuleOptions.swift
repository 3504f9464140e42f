import ArgumentParser
import Foundation
import MITMCore
import MITMRules

/// The QA toolbox's flags: network conditions, map local and remote, fixed answers, delays, faults, and a rules file.
struct TrafficRuleOptions: ParsableArguments {
    @Option(
        name: .customLong("throttle"),
        help: ArgumentHelp(
            "Simulate a network for connections to HOST (a pattern; every host without HOST=): 3g, edge, lte, offline, or "
                + "down=256kbit,up=64kbit,latency=300ms,loss=1%. Repeatable; the most specific pattern wins.",
            valueName: "[host=]profile"))
    var throttle: [String] = []

    @Option(
        name: .customLong("map-local"),
        help: ArgumentHelp(
            "Answer requests matching URL_PATTERN ([scheme://]host[/path], path a prefix or a glob with *) from a file, or from "
                + "a directory (the rest of the path names the file); the upstream is not asked. Repeatable.",
            valueName: "url-pattern=path"))
    var mapLocal: [String] = []

    @Option(
        name: .customLong("map-remote"),
        help: ArgumentHelp(
            "Send requests matching URL_PATTERN to another origin (scheme, host, port, path prefix), verified as that origin. "
                + "The client still sees a certificate for the host it asked for. Repeatable.",
            valueName: "url-pattern=url"))
    var mapRemote: [String] = []

    @Option(
        name: .customLong("respond"),
        help: ArgumentHelp(
            "Answer requests matching URL_PATTERN with STATUS (e.g. 503) without contacting the upstream. Repeatable.",
            valueName: "url-pattern=status"))
    var respond: [String] = []

    @Option(
        name: .customLong("delay"),
        help: ArgumentHelp(
            "Hold requests matching URL_PATTERN for DURATION (2s, 300ms) before handling them. Repeatable.",
            valueName: "url-pattern=duration"))
    var delay: [String] = []

    @Option(
        name: .customLong("fault"),
        help: ArgumentHelp(
            "Break requests matching URL_PATTERN: close-before-headers, reset-before-headers, close-after-headers or "
                + "reset-after-headers. Repeatable.",
            valueName: "url-pattern=kind"))
    var fault: [String] = []

    @Option(
        name: .customLong("rules"),
        help: ArgumentHelp(
            "A rules file (YAML or JSON) with the same actions and more (header and status rewrites, bodies from files); "
                + "read again whenever it changes, keeping the previous rules if the new version has a mistake.",
            valueName: "file"))
    var rulesFile: String?

    /// The flags' rules, in a fixed order (throttles, answers, remaps, delays, faults); relative paths from the working directory.
    func rules() throws -> [TrafficRule] {
        let directory = FileManager.default.currentDirectoryPath
        do {
            var rules: [TrafficRule] = []
            for text in throttle { rules.append(try RuleFlags.throttle(text)) }
            for text in mapLocal { rules.append(try RuleFlags.mapLocal(text, baseDirectory: directory)) }
            for text in respond { rules.append(try RuleFlags.respond(text)) }
            for text in mapRemote { rules.append(try RuleFlags.mapRemote(text)) }
            for text in delay { rules.append(try RuleFlags.delay(text)) }
            for text in fault { rules.append(try RuleFlags.fault(text)) }
            return rules
        } catch {
            throw ValidationError(error.message)
        }
    }

    func validate() throws {
        for rule in try rules() {
            guard let path = rule.actions.mapLocal else { continue }
            guard FileManager.default.fileExists(atPath: path) else {
                throw ValidationError("\(rule.name): no file or directory at \(path)")
            }
        }
        if let rulesFile, !FileManager.default.isReadableFile(atPath: rulesFile) {
            throw ValidationError("--rules \(rulesFile): no readable file there")
        }
    }

    /// The rules file as an absolute path (it is read again later, whatever the working directory then).
    var absoluteRulesFile: String? {
        rulesFile.map { RuleFlags.absolute($0, from: FileManager.default.currentDirectoryPath) }
    }
}
