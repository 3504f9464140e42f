/// A rule acted: on a request (answered, mapped, rewritten, delayed, broken) or on a connection (throttled).
public struct RuleFiring: Sendable, Equatable, Codable {
    /// The proxy's connection id.
    public var connectionID: Int
    /// The host concerned.
    public var host: String
    /// The port concerned.
    public var port: Int
    /// The names of the rules that acted, in order.
    public var rules: [String]
    /// What they did, in words (`answered from /srv/mock/a.json (1.2 kB)`, `throttled: down 512kbit/s, up unlimited`).
    public var action: String
    /// The request's URL, for request rules.
    public var url: String?
    /// The request's method, for request rules.
    public var method: String?
    /// The exchange it acted on (`ExchangeRecord.exchange`, with `connectionID`), for request rules: the flow list
    /// matches the firing to its exchange by it.
    public var exchange: Int?

    /// A firing.
    public init(
        connectionID: Int, host: String, port: Int, rules: [String], action: String, url: String? = nil,
        method: String? = nil
    ) {
        self.connectionID = connectionID
        self.host = host
        self.port = port
        self.rules = rules
        self.action = action
        self.url = url
        self.method = method
    }

    /// A firing of request rules on the exchange of `record`.
    public init(on record: ExchangeRecord, rules: [String], action: String) {
        self.init(
            connectionID: record.connectionID, host: record.host, port: record.port, rules: rules, action: action,
            url: record.url, method: record.request.method)
        exchange = record.exchange
    }

    /// Whether the rules answered the request themselves (a response, a file, a fault) instead of its origin, as the
    /// words of a local answer say (`answered 418`, `answered 200 from /srv/a.json`, `reset the connection instead
    /// of answering`), after any `delayed 2 s`.
    public var answersInsteadOfOrigin: Bool {
        action.split(separator: "; ").contains { $0.hasPrefix("answered ") || $0.hasSuffix("instead of answering") }
    }

    /// `rule "a", "b": GET https://x/small: answered 503`.
    public var line: String {
        let names = rules.map { "\"\($0)\"" }.joined(separator: ", ")
        if url == nil && port == 0 { return "rule \(names): \(action)" }
        let subject = url.map { "\(method.map { "\($0) " } ?? "")\($0)" } ?? "\(host):\(port)"
        return "rule \(names): \(subject): \(action)"
    }
}

/// How often a rule acted in a run, for the report.
public struct RuleTally: Sendable, Equatable, Codable {
    /// The rule's name.
    public var rule: String
    /// How many requests or connections it acted on.
    public var fired: Int
    /// What it did the last time.
    public var lastAction: String

    /// A tally.
    public init(rule: String, fired: Int, lastAction: String) {
        self.rule = rule
        self.fired = fired
        self.lastAction = lastAction
    }
}
