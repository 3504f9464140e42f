/// A flow's WebSocket held on the heap, so that the many flows without one carry a pointer, not the record.
/// Immutable: a flow whose WebSocket changes gets a new one, and copies of the flow keep what they saw.
final class SharedWebSocket: Sendable, Equatable {
    let webSocket: FlowWebSocket

    init(_ webSocket: FlowWebSocket) {
        self.webSocket = webSocket
    }

    static func == (lhs: SharedWebSocket, rhs: SharedWebSocket) -> Bool {
        lhs === rhs || lhs.webSocket == rhs.webSocket
    }
}
