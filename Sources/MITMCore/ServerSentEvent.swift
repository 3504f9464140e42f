/// Server-sent events (the `text/event-stream` format browsers read with `EventSource`).
package enum ServerSentEvent {
    /// One event: `event: NAME`, a `data:` line per line of `data`, and the blank line that ends it.
    package static func frame(_ name: String, _ data: String) -> [UInt8] {
        var text = "event: \(name)\n"
        // A line break inside the data would end the field early: every kind of line break starts a new `data:` line.
        for line in data.split(
            omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        {
            text += "data: \(line)\n"
        }
        text += "\n"
        return Array(text.utf8)
    }

    /// A comment line: keeps the connection busy without an event.
    package static let heartbeat: [UInt8] = Array(": still here\n\n".utf8)
}
