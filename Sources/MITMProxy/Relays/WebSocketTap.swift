import Foundation
import MITMCore
import MITMRecording

/// Watches the bytes of one WebSocket as a relay passes them on (a copy: nothing is changed or held back), and
/// reports every message and, once, the WebSocket's end. Confined to the connection's loop.
final class WebSocketTap {
    let endpoint: WebSocketEndpoint
    private let events: EventFanOut
    private let clock: ProxyClock
    private var fromClient: WebSocketFrameReader
    private var fromServer: WebSocketFrameReader
    private var summary: WebSocketCloseRecord
    private var finished = false

    /// A tap on the WebSocket `handshake` opened at `endpoint`, keeping `captureLimit` bytes of each message, its
    /// records timed by `clock`.
    init(
        endpoint: WebSocketEndpoint, handshake: WebSocketHandshake, captureLimit: Int, events: EventFanOut,
        clock: ProxyClock
    ) {
        self.endpoint = endpoint
        self.events = events
        self.clock = clock
        fromClient = WebSocketFrameReader(direction: .send, handshake: handshake, captureLimit: captureLimit)
        fromServer = WebSocketFrameReader(direction: .receive, handshake: handshake, captureLimit: captureLimit)
        summary = WebSocketCloseRecord(endpoint: endpoint, time: clock.wallNow(), reason: "")
    }

    /// Bytes relayed from the client (`fromClient`) or from the server.
    func observe(_ bytes: UnsafeRawBufferPointer, fromClient client: Bool) {
        guard !finished else { return }
        if client {
            summary.bytesUp += bytes.count
            report(fromClient.feed(bytes))
        } else {
            summary.bytesDown += bytes.count
            report(fromServer.feed(bytes))
        }
    }

    /// Bytes relayed from the client (`fromClient`) or from the server.
    func observe(_ bytes: [UInt8], fromClient client: Bool) {
        bytes.withUnsafeBytes { observe($0, fromClient: client) }
    }

    /// One side stopped sending: a frame it left unfinished is reported.
    func inputEnded(fromClient client: Bool) {
        guard !finished else { return }
        report(client ? fromClient.finish() : fromServer.finish())
    }

    /// The WebSocket ended for `reason`: reported once, after anything either side left unfinished.
    func finish(reason: String) {
        guard !finished else { return }
        report(fromClient.finish())
        report(fromServer.finish())
        finished = true
        summary.time = clock.wallNow()
        summary.reason = reason
        events.emit(.webSocketClose(summary))
    }

    private func report(_ messages: [WebSocketMessage]) {
        guard !messages.isEmpty else { return }
        let now = clock.wallNow()
        for message in messages {
            if message.direction == .send { summary.messagesSent += 1 } else { summary.messagesReceived += 1 }
            if message.kind == .close && summary.closedBy == nil {
                summary.closedBy = message.direction
                summary.closeCode = message.closeCode
                summary.closeReason = message.closeReason
            }
            events.emit(.webSocketMessage(WebSocketMessageRecord(endpoint: endpoint, time: now, message: message)))
        }
    }
}
