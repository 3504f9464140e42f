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

    /// A stream whose request head arrived (`endStream`: with the end of the request) when `record` started.
    init(clientID: Int32, record: consuming ExchangeRecord, endStream: Bool, asksForWebSocket: Bool) {
        self.clientID = clientID
        machine = HTTP2StreamMachine(requestEndedAt: endStream ? record.started : nil)
        self.record = record
        self.asksForWebSocket = asksForWebSocket
    }

    /// The upstream stream the request goes to, while there is one.
    var upstreamID: Int32? { machine.upstreamID }

    /// Finishes the record at `end`, in place, with its failure and HAR phases, and returns it (one copy, where a
    /// finished copy of the record cost two).
    func finishRecord(at end: Date) -> ExchangeRecord {
        record.failure = failure
        record.complete(at: end, requestEnded: machine.requestEndedAt, responseStarted: machine.headAt)
        return record
    }

    /// Notes `reason` unless a reason is already known.
    func fail(_ reason: String) {
        if failure == nil { failure = reason }
    }
}
