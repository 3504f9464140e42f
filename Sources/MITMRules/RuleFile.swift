import MITMCore

/// Reads the rules of a rules file (`--rules FILE`, YAML or JSON) from its tree:
///
/// ```yaml
/// rules:
///   - name: small is down          # optional; default "rule N (FILE)"
///     match: api.example.com/small  # URL pattern, or {scheme, host, path, method}
///     respond: 503                  # or {status, body, bodyFile, headers}
///   - match: {host: api.example.com, path: /chunked, method: GET}
///     delay: 2s
/// ```
///
/// Actions: `mapLocal`, `mapRemote`, `respond`, `requestHeaders` / `responseHeaders` (`{set: {Name: value},
/// remove: [Name]}`), `status`, `bodyFile`, `delay`, `fault`, `throttle`, `breakpoint` (`request`, `response`,
/// `both`, or `{at, timeout}`); `enabled: false` skips a rule.
/// Relative paths are taken from the file's directory. Unknown keys are errors (a typo must not silently
/// switch a rule off).
package enum RuleFile {
    static let ruleKeys = [
        "name", "match", "method", "methods", "enabled", "mapLocal", "mapRemote", "respond", "requestHeaders",
        "responseHeaders", "status", "bodyFile", "delay", "fault", "throttle", "breakpoint",
    ]

    /// The enabled rules of `tree`, read from the file `fileName` in `baseDirectory`. Every rule is read, so a file with
    /// several mistakes is refused with all of them, each named by its rule and (from `ruleLines`, the line each rule
    /// starts on, when the reader knows it) its line.
    package static func rules(
        from tree: RuleFileValue, fileName: String, baseDirectory: String,
        ruleLines: [Int] = []
    ) throws(RuleError) -> [TrafficRule] {
        let list: [RuleFileValue]
        switch tree {
        case .list(let items):
            list = items
        case .map(let entries):
            for (key, _) in entries where key != "rules" {
                throw RuleError("\(fileName): unknown top-level key \"\(key)\"; the file holds \"rules:\" and a list")
            }
            guard let found = entries.first(where: { $0.key == "rules" })?.value else {
                throw RuleError("\(fileName): no \"rules:\" list")
            }
            switch found {
            case .list(let items): list = items
            case .null: list = []
            default: throw RuleError("\(fileName): \"rules\" must be a list, not \(found.kindName)")
            }
        case .null:
            list = []
        case .scalar:
            throw RuleError("\(fileName): expected \"rules:\" and a list of rules, not \(tree.kindName)")
        }
        var rules: [TrafficRule] = []
        var mistakes: [String] = []
        for (index, item) in list.enumerated() {
            let line = index < ruleLines.count ? " (line \(ruleLines[index]))" : ""
            let place = "\(fileName) rule \(index + 1)"
            guard case .map(let entries) = item else {
                mistakes.append("\(place): a rule is a mapping of keys, not \(item.kindName)\(line)")
                continue
            }
            do {
                if let rule = try rule(entries, place: place, baseDirectory: baseDirectory) { rules.append(rule) }
            } catch {
                mistakes.append(error.message + line)
            }
        }
        guard mistakes.isEmpty else {
            throw RuleError(
                mistakes.count == 1
                    ? mistakes[0]
                    : "\(fileName) has \(mistakes.count) mistakes:\n  " + mistakes.joined(separator: "\n  "))
        }
        return rules
    }

    private static func rule(_ entries: [(key: String, value: RuleFileValue)], place: String, baseDirectory: String)
        throws(RuleError) -> TrafficRule?
    {
        var seen: Set<String> = []
        for (key, _) in entries {
            guard ruleKeys.contains(key) else {
                throw RuleError("\(place): unknown key \"\(key)\"; a rule takes \(ruleKeys.joined(separator: ", "))")
            }
            guard seen.insert(key).inserted else { throw RuleError("\(place): \"\(key)\" given twice") }
        }
        let value = { (key: String) in entries.first { $0.key == key }?.value }
        var place = place
        let name = try value("name").map { v throws(RuleError) in try scalar(v, "name", place) }
        if let name { place += " (\(name))" }
        if let enabled = value("enabled"), try scalar(enabled, "enabled", place).lowercased() == "false" { return nil }
        guard let matchValue = value("match") else {
            throw RuleError(
                "\(place): no \"match\"; give a URL pattern like api.example.com/v1 or {host: api.example.com, path: /v1}"
            )
        }
        var (pattern, methods) = try match(matchValue, place)
        for key in ["method", "methods"] {
            if let given = value(key) { methods += try strings(given, key, place).map { $0.uppercased() } }
        }
        let path = { (v: RuleFileValue, key: String) throws(RuleError) -> String in
            RuleFlags.absolute(try scalar(v, key, place), from: baseDirectory)
        }
        var actions = RuleActions()
        if let v = value("mapLocal") { actions.mapLocal = try path(v, "mapLocal") }
        if let v = value("mapRemote") {
            do { actions.mapRemote = try RemoteTarget(parsing: try scalar(v, "mapRemote", place)) } catch {
                throw RuleError("\(place): \(error)")
            }
        }
        if let v = value("respond") { actions.respond = try respond(v, place, baseDirectory: baseDirectory) }
        if let v = value("requestHeaders") { actions.requestHeaders = try headerEdits(v, "requestHeaders", place) }
        if let v = value("responseHeaders") { actions.responseHeaders = try headerEdits(v, "responseHeaders", place) }
        if let v = value("status") { actions.status = try status(v, "status", place) }
        if let v = value("bodyFile") { actions.bodyFile = try path(v, "bodyFile") }
        if let v = value("delay") {
            let text = try scalar(v, "delay", place)
            guard let seconds = QuantityText.seconds(text) ?? Double(text).flatMap({ $0 >= 0 ? $0 : nil }) else {
                throw RuleError("\(place): delay \"\(text)\" is not a duration like 2s or 300ms")
            }
            do { actions.delay = try RuleActions.delay(seconds, written: text) } catch {
                throw RuleError("\(place): \(error)")
            }
        }
        if let v = value("fault") {
            do { actions.fault = try RuleFault(parsing: try scalar(v, "fault", place)) } catch {
                throw RuleError("\(place): \(error)")
            }
        }
        if let v = value("breakpoint") { actions.breakpoint = try breakpoint(v, place) }
        if let v = value("throttle") {
            do { actions.throttle = try NetworkConditions(parsing: try scalar(v, "throttle", place)) } catch {
                throw RuleError("\(place): \(error)")
            }
            let others = entries.map(\.key).filter { !["name", "match", "enabled", "throttle"].contains($0) }
            guard others.isEmpty, pattern.path == "/", pattern.scheme == nil, methods.isEmpty else {
                throw RuleError(
                    "\(place): throttle applies to whole connections: match a host only (no path, scheme or method) "
                        + "and put other actions in a rule of their own")
            }
        }
        if actions == RuleActions() {
            throw RuleError(
                "\(place): no action; give one of mapLocal, mapRemote, respond, requestHeaders, responseHeaders, "
                    + "status, bodyFile, delay, fault, throttle, breakpoint")
        }
        if actions.mapLocal != nil && actions.respond != nil {
            throw RuleError("\(place): mapLocal and respond both answer the request; keep one")
        }
        if (actions.mapLocal != nil || actions.respond != nil) && actions.mapRemote != nil {
            throw RuleError("\(place): a rule that answers locally cannot also map to a remote origin")
        }
        pattern = URLPattern(scheme: pattern.scheme, host: pattern.host, path: pattern.path)
        return TrafficRule(name: name ?? place, pattern: pattern, methods: methods, actions: actions)
    }

    private static func match(_ value: RuleFileValue, _ place: String) throws(RuleError) -> (URLPattern, [String]) {
        switch value {
        case .scalar(let text):
            do { return (try URLPattern(parsing: text), []) } catch { throw RuleError("\(place): match: \(error)") }
        case .map(let entries):
            var scheme: String?
            var host = "*"
            var path = "/"
            var methods: [String] = []
            for (key, item) in entries {
                switch key {
                case "scheme": scheme = try scalar(item, "match.scheme", place).lowercased()
                case "host": host = try scalar(item, "match.host", place)
                case "path": path = try scalar(item, "match.path", place)
                case "method", "methods": methods += try strings(item, "match.\(key)", place).map { $0.uppercased() }
                default:
                    throw RuleError("\(place): unknown key \"match.\(key)\"; match takes scheme, host, path, method")
                }
            }
            let text = (scheme.map { "\($0)://" } ?? "") + host + (path.hasPrefix("/") ? path : "/" + path)
            do { return (try URLPattern(parsing: text), methods) } catch {
                throw RuleError("\(place): match: \(error)")
            }
        default:
            throw RuleError("\(place): match must be a URL pattern or a mapping, not \(value.kindName)")
        }
    }

    /// `breakpoint: request` (or `response`, `both`), or `{at: request, timeout: 2m}`.
    private static func breakpoint(_ value: RuleFileValue, _ place: String) throws(RuleError) -> Breakpoint {
        var phases = "both"
        var timeout = Breakpoint.defaultTimeout
        switch value {
        case .scalar(let text):
            phases = text
        case .map(let entries):
            for (key, item) in entries {
                switch key {
                case "at": phases = try scalar(item, "breakpoint.at", place)
                case "timeout":
                    let text = try scalar(item, "breakpoint.timeout", place)
                    guard let seconds = QuantityText.seconds(text), seconds > 0, seconds <= RuleActions.longestDelay
                    else {
                        throw RuleError(
                            "\(place): breakpoint.timeout \"\(text)\" is not a duration between 1ms and a day, like 30s or 5m"
                        )
                    }
                    timeout = seconds
                default: throw RuleError("\(place): unknown key \"breakpoint.\(key)\"; breakpoint takes at, timeout")
                }
            }
        default:
            throw RuleError(
                "\(place): breakpoint must be request, response, both or {at, timeout}, not \(value.kindName)")
        }
        let breakpoint: Breakpoint
        do { breakpoint = try Breakpoint(phases: phases, timeout: timeout) } catch {
            throw RuleError("\(place): \(error)")
        }
        return breakpoint
    }

    private static func respond(_ value: RuleFileValue, _ place: String, baseDirectory: String) throws(RuleError)
        -> FixedResponse
    {
        if case .scalar = value { return FixedResponse(status: try status(value, "respond", place)) }
        guard case .map(let entries) = value else {
            throw RuleError(
                "\(place): respond must be a status or {status, body, bodyFile, headers}, not \(value.kindName)")
        }
        var response = FixedResponse(status: 200)
        var hasStatus = false
        for (key, item) in entries {
            switch key {
            case "status":
                response.status = try status(item, "respond.status", place)
                hasStatus = true
            case "body": response.body = try scalar(item, "respond.body", place)
            case "bodyFile":
                response.bodyFile = RuleFlags.absolute(try scalar(item, "respond.bodyFile", place), from: baseDirectory)
            case "headers": response.headers = try headerFields(item, "respond.headers", place)
            default:
                throw RuleError(
                    "\(place): unknown key \"respond.\(key)\"; respond takes status, body, bodyFile, headers")
            }
        }
        guard hasStatus else { throw RuleError("\(place): respond needs a status") }
        return response
    }

    private static func headerEdits(_ value: RuleFileValue, _ key: String, _ place: String) throws(RuleError)
        -> HeaderEdits
    {
        guard case .map(let entries) = value else {
            throw RuleError("\(place): \(key) must be {set: {Name: value}, remove: [Name]}, not \(value.kindName)")
        }
        var edits = HeaderEdits()
        for (name, item) in entries {
            switch name {
            case "set": edits.setFields = try headerFields(item, "\(key).set", place)
            case "remove":
                edits.removeNames = try strings(item, "\(key).remove", place)
                for field in edits.removeNames where !isFieldName(field) {
                    throw RuleError("\(place): \(key).remove: \"\(field)\" is not a header name")
                }
            default: throw RuleError("\(place): unknown key \"\(key).\(name)\"; use set and remove")
            }
        }
        return edits
    }

    private static func headerFields(_ value: RuleFileValue, _ key: String, _ place: String) throws(RuleError)
        -> [HTTPHeaderField]
    {
        guard case .map(let entries) = value else {
            throw RuleError("\(place): \(key) must be a mapping of Name: value, not \(value.kindName)")
        }
        var fields: [HTTPHeaderField] = []
        for (name, item) in entries {
            let text = try scalar(item, "\(key).\(name)", place)
            guard isFieldName(name) else { throw RuleError("\(place): \(key): \"\(name)\" is not a header name") }
            guard text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
                throw RuleError("\(place): \(key).\(name): the value contains a line break or control character")
            }
            fields.append(HTTPHeaderField(name: name, value: text))
        }
        return fields
    }

    static func isFieldName(_ name: String) -> Bool { !name.isEmpty && HTTPSyntax.isToken(name.utf8) }

    private static func status(_ value: RuleFileValue, _ key: String, _ place: String) throws(RuleError) -> Int {
        let text = try scalar(value, key, place)
        guard let status = Int(text), (200...599).contains(status) else {
            throw RuleError("\(place): \(key) \"\(text)\" is not a status between 200 and 599")
        }
        return status
    }

    private static func scalar(_ value: RuleFileValue, _ key: String, _ place: String) throws(RuleError) -> String {
        guard case .scalar(let text) = value else {
            throw RuleError("\(place): \(key) must be a single value, not \(value.kindName)")
        }
        return text
    }

    private static func strings(_ value: RuleFileValue, _ key: String, _ place: String) throws(RuleError) -> [String] {
        switch value {
        case .scalar(let text): return [text]
        case .list(let items):
            var texts: [String] = []
            for item in items { texts.append(try scalar(item, key, place)) }
            return texts
        default: throw RuleError("\(place): \(key) must be a value or a list of values, not \(value.kindName)")
        }
    }
}
