import MITMCore

/// An exchange paused at a breakpoint as the web UI lists it: what its relay shows of it, its number, and its times.
package struct BreakpointPause: Encodable, Sendable {
    /// What a relay shows of the exchange it pauses.
    package struct Exchange: Encodable, Sendable {
        package let phase: BreakpointPhase
        package let rule: String
        package let connection: Int
        package let method: String
        package let url: String
        /// The response's status, at a response breakpoint.
        package let status: Int?
        package let headers: [[String]]
        /// The request's body at a request breakpoint, the response's at a response breakpoint.
        package var body: PausedBody
        /// On an intercepted connection the host is fixed: only the path and query of the URL may change.
        package let hostFixed: Bool

        package init(
            phase: BreakpointPhase, rule: String, connection: Int, method: String, url: String, status: Int?,
            headers: [[String]], body: PausedBody, hostFixed: Bool
        ) {
            self.phase = phase
            self.rule = rule
            self.connection = connection
            self.method = method
            self.url = url
            self.status = status
            self.headers = headers
            self.body = body
            self.hostFixed = hostFixed
        }
    }

    /// The web UI's answer to one paused exchange.
    package enum Answer: Sendable {
        case continued(BreakpointEdit)
        case aborted
    }

    package let id: Int
    package var exchange: Exchange
    /// Milliseconds since 1970: when it paused, and when it is aborted unless answered.
    package let since: Double
    package let abortsAt: Double

    package init(id: Int, exchange: Exchange, since: Double, abortsAt: Double) {
        self.id = id
        self.exchange = exchange
        self.since = since
        self.abortsAt = abortsAt
    }

    private enum Keys: String, CodingKey { case id, since, abortsAt }

    /// One flat object: the exchange's fields beside the number and times.
    package func encode(to encoder: any Encoder) throws {
        try exchange.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id)
        try container.encode(since, forKey: .since)
        try container.encode(abortsAt, forKey: .abortsAt)
    }
}
