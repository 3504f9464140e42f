import Foundation
import MITMCore

/// One client stream of an HTTP/2 relay and what became of it. A class: the relay changes a stream's fields as its
/// frames arrive, in place, where a copy out of the dictionary and back would copy its record each time.
final class HTTP2RelayStream {
    /// The stream's ID toward the client.
    let clientID: Int32
    /// Its twin toward the upstream, while that one is open.
    var upstreamID: Int32?
    /// The exchange as it will be reported.
    var record: ExchangeRecord
    /// The proxy answered the stream itself (a 502, a 431); request bytes are discarded.
    var answeredLocally = false
    /// The final response head went to the client.
    var responseStarted = false
    /// The response's last byte (or its trailers) went to the client's queue.
    var responseEnded = false
    /// Why the stream failed, once known (the first reason wins).
    var failure: String?
    /// When the client's request ended (END_STREAM), for HAR's send phase.
    var requestEnded: Date?
    /// When the response head arrived, for HAR's wait phase.
    var responseHeadArrived: Date?
    /// An extended CONNECT asking for a WebSocket (RFC 8441).
    var webSocketRequested = false
    /// Reads the WebSocket's messages from the DATA both ways, once the upstream accepted it.
    var webSocket: WebSocketTap?
    /// The exchange was reported already: a WebSocket's handshake is reported when it is answered, and its
    /// stream's end closes the WebSocket's record instead.
    var reported = false

    init(clientID: Int32, record: ExchangeRecord) {
        self.clientID = clientID
        self.record = record
    }

    /// The record as finished at `end`, with its failure and HAR phases.
    func finishedRecord(at end: Date) -> ExchangeRecord {
        var finished = record
        finished.failure = failure
        finished.complete(at: end, requestEnded: requestEnded, responseStarted: responseHeadArrived)
        return finished
    }

    /// Notes `reason` unless a reason is already known.
    func fail(_ reason: String) {
        if failure == nil { failure = reason }
    }
}
