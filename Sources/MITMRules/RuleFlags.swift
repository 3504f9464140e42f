import MITMCore

/// The rules the command line's shortcuts make: `--map-local`, `--map-remote`, `--respond`, `--delay`,
/// `--fault` (each `URL_PATTERN=VALUE`) and `--throttle [HOST=]PROFILE`. Each rule is named by its flag.
package enum RuleFlags {
    /// `--map-local URL_PATTERN=PATH`: answer from a file or a directory. A relative PATH is taken from `baseDirectory`.
    package static func mapLocal(_ text: String, baseDirectory: String) throws(RuleError) -> TrafficRule {
        let (pattern, value) = try split("--map-local", text, valueName: "PATH")
        var actions = RuleActions()
        actions.mapLocal = absolute(value, from: baseDirectory)
        return TrafficRule(name: "--map-local \(text)", pattern: pattern, actions: actions)
    }

    /// `--map-remote URL_PATTERN=URL`: send to another origin.
    package static func mapRemote(_ text: String) throws(RuleError) -> TrafficRule {
        let (pattern, value) = try split("--map-remote", text, valueName: "URL")
        var actions = RuleActions()
        do {
            actions.mapRemote = try RemoteTarget(parsing: value)
        } catch {
            throw RuleError("--map-remote \(text): \(error)")
        }
        return TrafficRule(name: "--map-remote \(text)", pattern: pattern, actions: actions)
    }

    /// `--respond URL_PATTERN=STATUS`: answer with that status (and a short text body) without contacting the upstream.
    package static func respond(_ text: String) throws(RuleError) -> TrafficRule {
        let (pattern, value) = try split("--respond", text, valueName: "STATUS")
        guard let status = Int(value), (200...599).contains(status) else {
            throw RuleError("--respond \(text): \"\(value)\" is not a status between 200 and 599")
        }
        var actions = RuleActions()
        actions.respond = FixedResponse(status: status)
        return TrafficRule(name: "--respond \(text)", pattern: pattern, actions: actions)
    }

    /// `--delay URL_PATTERN=DURATION`: wait before handling the request.
    package static func delay(_ text: String) throws(RuleError) -> TrafficRule {
        let (pattern, value) = try split("--delay", text, valueName: "DURATION")
        guard let seconds = QuantityText.seconds(value) else {
            throw RuleError("--delay \(text): \"\(value)\" is not a duration like 2s or 300ms")
        }
        var actions = RuleActions()
        do { actions.delay = try RuleActions.delay(seconds, written: value) } catch {
            throw RuleError("--delay \(text): \(error)")
        }
        return TrafficRule(name: "--delay \(text)", pattern: pattern, actions: actions)
    }

    /// `--fault URL_PATTERN=KIND`: close or reset the connection before or after the response head.
    package static func fault(_ text: String) throws(RuleError) -> TrafficRule {
        let (pattern, value) = try split("--fault", text, valueName: "KIND")
        var actions = RuleActions()
        do {
            actions.fault = try RuleFault(parsing: value)
        } catch {
            throw RuleError("--fault \(text): \(error)")
        }
        return TrafficRule(name: "--fault \(text)", pattern: pattern, actions: actions)
    }

    /// `--throttle PROFILE` (every host) or `--throttle HOST=PROFILE`; PROFILE may itself be `down=...,up=...`.
    package static func throttle(_ text: String) throws(RuleError) -> TrafficRule {
        var hostText = "*"
        var profile = text
        if let equals = text.firstIndex(of: "=") {
            let head = text[..<equals].trimmingSpaces.lowercased()
            if !NetworkConditions.keys.contains(head) {
                hostText = String(text[..<equals])
                profile = String(text[text.index(after: equals)...])
            }
        }
        var actions = RuleActions()
        let host: HostPattern
        do {
            host = try HostPattern(hostText)
            actions.throttle = try NetworkConditions(parsing: profile)
        } catch let error as RuleError {
            throw RuleError("--throttle \(text): \(error)")
        } catch {
            throw RuleError("--throttle \(text): \(error)")
        }
        return TrafficRule(
            name: "--throttle \(text)", pattern: URLPattern(scheme: nil, host: host, path: "/"), actions: actions)
    }

    static func split(_ flag: String, _ text: String, valueName: String) throws(RuleError) -> (URLPattern, String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw RuleError(
                "\(flag) \(text): expected URL_PATTERN=\(valueName), e.g. api.example.com/v1/config=\(example(valueName))"
            )
        }
        let value = String(text[text.index(after: equals)...])
        guard !value.isEmpty else { throw RuleError("\(flag) \(text): the \(valueName) after \"=\" is empty") }
        do {
            return (try URLPattern(parsing: String(text[..<equals])), value)
        } catch {
            throw RuleError("\(flag) \(text): \(error)")
        }
    }

    private static func example(_ valueName: String) -> String {
        switch valueName {
        case "PATH": "config.json"
        case "URL": "https://staging.example.com/v1/config"
        case "STATUS": "503"
        case "DURATION": "2s"
        default: RuleFault.resetBeforeHeaders.rawValue
        }
    }

    /// `path` made absolute against `directory`.
    package static func absolute(_ path: String, from directory: String) -> String {
        if path.hasPrefix("/") { return path }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        return base + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }
}
