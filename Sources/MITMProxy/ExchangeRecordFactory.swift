import Foundation
import MITMCore

/// Starts the exchange records of one relay: bodies captured as configured, and the setup costs of a
/// freshly made upstream connection charged to the first exchange over it (later ones reused it).
struct ExchangeRecordFactory {
    let connectionID: Int
    let captureLimit: Int
    /// DNS/connect/TLS costs of a new upstream connection, not yet charged to an exchange.
    var pendingConnectionTimings: UpstreamConnectionTimings?
    private var serverAddress: String?

    init(connectionID: Int, captureLimit: Int) {
        self.connectionID = connectionID
        self.captureLimit = captureLimit
    }

    /// A record for a request head that just arrived.
    mutating func record(for head: HTTPRequestHead, host: String, port: Int, scheme: String, version: HTTPVersion) -> ExchangeRecord {
        let now = Date()
        var record = ExchangeRecord(connectionID: connectionID, scheme: scheme, host: host, port: port,
                                    request: head, started: now, finished: now)
        record.httpVersion = version.description
        record.requestBody = CapturedBody(limit: captureLimit)
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
