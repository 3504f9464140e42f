import Foundation
import MITMCore

/// Starts the exchange records of one relay: bodies captured as configured, and the setup costs of a
/// freshly made upstream connection charged to the first exchange over it (later ones reused it).
///
/// JSON request bodies are always captured up to `jsonRequestCaptureLimit`, even without `--har`: that is
/// how a pin-failure report posted by the app is recognised. Such reports are a few kilobytes.
struct ExchangeRecordFactory {
    /// Bytes of a JSON request body kept whatever `captureLimit` says.
    static let jsonRequestCaptureLimit = 64 * 1024

    let connectionID: Int
    let captureLimit: Int
    /// Leaves `Proxy-Authorization` out of the records (the proxy's own credentials under `--proxy-auth`).
    let dropsProxyAuthorization: Bool
    /// The client's IP address.
    let client: String?
    /// The client for a person (`curl (pid 812)`), once the interception knows it.
    var clientName: String?
    /// The flow the connection's exchanges replay (a web UI replay's connection).
    var replayOf: Int?
    /// DNS/connect/TLS costs of a new upstream connection, not yet charged to an exchange.
    var pendingConnectionTimings: UpstreamConnectionTimings?
    private var serverAddress: String?
    /// The number of the last exchange started.
    private var exchanges = 0

    /// The rule throttling the connection, named on each of its exchanges.
    let connectionRules: [String]

    /// `client` is the client's IP address, when known.
    init(
        connectionID: Int, captureLimit: Int, client: String?, dropsProxyAuthorization: Bool = false,
        connectionRules: [String] = []
    ) {
        self.connectionID = connectionID
        self.captureLimit = captureLimit
        self.dropsProxyAuthorization = dropsProxyAuthorization
        self.client = client
        self.connectionRules = connectionRules
    }

    /// Records for the exchanges of `client`, naming the rule that throttles it, if one does, and the flow they replay
    /// when `client` is a web UI replay (`replays`).
    init(connectionID: Int, captureLimit: Int, client: Leg, dropsProxyAuthorization: Bool, replays: ReplayTags) {
        self.init(
            connectionID: connectionID, captureLimit: captureLimit, client: client.peerHost,
            dropsProxyAuthorization: dropsProxyAuthorization, connectionRules: client.throttleRule.map { [$0] } ?? [])
        replayOf = replays.tag(forPeer: client.peerDescription)?.replayOf
    }

    /// A record for a request head that arrived `now` (the proxy clock's wall time).
    mutating func record(
        for head: HTTPRequestHead, host: String, port: Int, scheme: String, version: HTTPVersion, at now: Date
    ) -> ExchangeRecord {
        var record = ExchangeRecord(
            connectionID: connectionID, scheme: scheme, host: host, port: port,
            request: head, started: now, finished: now)
        record.request.parsedFrom = nil
        record.httpVersion = version.description
        record.client = client
        record.clientName = clientName
        if dropsProxyAuthorization { record.request.headers.remove("proxy-authorization") }
        record.rules = connectionRules
        record.replayOf = replayOf
        exchanges += 1
        record.exchange = exchanges
        let isJSON = head.headers.first("content-type")?.lowercased().contains("json") ?? false
        record.requestBody = CapturedBody(
            limit: isJSON ? max(captureLimit, Self.jsonRequestCaptureLimit) : captureLimit)
        record.responseBody = CapturedBody(limit: captureLimit)
        if let fresh = pendingConnectionTimings {
            pendingConnectionTimings = nil
            record.timings.dns = fresh.dns
            record.timings.connect = fresh.connect
            record.timings.ssl = fresh.ssl
            serverAddress = fresh.address
        }
        record.serverAddress = serverAddress
        return record
    }
}
