/// Server-sent events (the `text/event-stream` format browsers read with `EventSource`).
public enum ServerSentEvent {
    /// One event: `event: NAME`, a `data:` line per line of `data`, and the blank line that ends it.
    public static func frame(_ name: String, _ data: String) -> [UInt8] {
        var text = "event: \(name)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line.hasSuffix("\r") ? line.dropLast() : line)\n"
        }
        text += "\n"
        return Array(text.utf8)
    }

    /// A comment line: keeps the connection busy without an event.
    public static let heartbeat: [UInt8] = Array(": still here\n\n".utf8)
}
