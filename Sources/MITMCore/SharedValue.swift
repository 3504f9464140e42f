/// A value held once on the heap and shared by the flows that carry it: a connection's TLS facts, shared by its
/// exchanges, or a WebSocket, which few flows have and which inline would take room in every flow of the list.
/// Immutable: a flow whose value changes gets a new box, and copies of the flow keep what they saw.
final class SharedValue<Value: Sendable & Equatable>: Sendable, Equatable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    static func == (lhs: SharedValue, rhs: SharedValue) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }
}
