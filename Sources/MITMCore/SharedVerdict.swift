/// A connection's TLS facts held once on the heap: the web UI's flow list keeps one per intercepted connection,
/// however many exchanges the connection carried, instead of a copy of the whole verdict in each (about 300 bytes).
final class SharedVerdict: Sendable, Equatable {
    let verdict: ConnectionVerdict

    init(_ verdict: ConnectionVerdict) {
        self.verdict = verdict
    }

    static func == (lhs: SharedVerdict, rhs: SharedVerdict) -> Bool {
        lhs === rhs || lhs.verdict == rhs.verdict
    }
}
