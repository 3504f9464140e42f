import Foundation
import MITMCore

/// One client stream of an HTTP/2 relay: its life (`HTTP2StreamMachine`) and its record. A class: the relay changes
/// a stream as its frames arrive, in place, where a copy out of the dictionary and back would copy its record each
/// time.
final class HTTP2RelayStream {
    /// The stream's ID toward the client.
    let clientID: Int32
    /// An extended CONNECT asking for a WebSocket (RFC 8441).
    let asksForWebSocket: Bool
    var machine: HTTP2StreamMachine
    /// The exchange as it will be reported.
    var record: ExchangeRecord
    /// Why the stream failed, once known (the first reason wins).
    var failure: String?
    /// Reads the WebSocket's messages from the DATA both ways, once the upstream accepted it. Its handshake was
    /// reported then, and the stream's end closes the WebSocket's record instead.
    var webSocket: WebSocketTap?

    init(clientID: Int32, record: ExchangeRecord, requestEndedAt: Date?, asksForWebSocket: Bool) {
        self.clientID = clientID
        self.record = record
        self.asksForWebSocket = asksForWebSocket
        machine = HTTP2StreamMachine(requestEndedAt: requestEndedAt)
    }

    /// The upstream stream the request goes to, while there is one.
    var upstreamID: Int32? { machine.upstreamID }

    /// The record as finished at `end`, with its failure and HAR phases.
    func finishedRecord(at end: Date) -> ExchangeRecord {
        var finished = record
        finished.failure = failure
        finished.complete(at: end, requestEnded: machine.requestEndedAt, responseStarted: machine.headAt)
        return finished
    }

    /// Notes `reason` unless a reason is already known.
    func fail(_ reason: String) {
        if failure == nil { failure = reason }
    }
}
