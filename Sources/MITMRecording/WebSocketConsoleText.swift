import MITMCore

/// Console words for WebSocket messages and closes: one line each, with the first characters of text.
enum WebSocketConsoleText {
    /// Characters of a text message shown.
    static let previewCharacters = 60
    /// Bytes of a binary message shown, in hex.
    static let previewBytes = 16

    /// `WS origin.test: send text 13 B "hello, server"`, with `MALFORMED: ...` when it breaks the protocol.
    static func line(_ record: WebSocketMessageRecord) -> String {
        let message = record.message
        var line = "WS \(record.endpoint.host): \(message.direction.rawValue) \(message.kind.rawValue)"
        if message.kind == .close {
            if let code = message.closeCode { line += " \(code)" }
            if let reason = message.closeReason, !reason.isEmpty { line += " \(quoted(reason))" }
        } else {
            line += " \(ByteCountText.format(message.payload.totalSize))"
            if message.compressed { line += " (\(ByteCountText.format(message.wireSize)) compressed)" }
            if message.frames > 1 { line += " in \(message.frames) frames" }
            line += preview(message)
        }
        if let problem = message.problem { line += " MALFORMED: \(problem)" }
        return line
    }

    /// `WS https://origin.test/chat ended: 3 sent, 4 received, 1.2 kB up, 3.4 kB down; the server closed (1000 "bye")`.
    static func line(_ record: WebSocketCloseRecord) -> String {
        var line =
            "WS \(record.endpoint.url) ended: \(record.messagesSent) sent, \(record.messagesReceived) received, "
            + "\(ByteCountText.format(record.bytesUp)) up, \(ByteCountText.format(record.bytesDown)) down; "
        switch record.closedBy {
        case .send?: line += "the client closed"
        case .receive?: line += "the server closed"
        case nil: line += "no close frame (\(record.reason))"
        }
        if record.closedBy != nil {
            let reason = record.closeReason.map { $0.isEmpty ? "" : " \(quoted($0))" } ?? ""
            line += record.closeCode.map { " (\($0)\(reason))" } ?? ""
        }
        return line
    }

    private static func preview(_ message: WebSocketMessage) -> String {
        guard message.payload.totalSize > 0, !message.payload.bytes.isEmpty else { return "" }
        if message.kind == .text {
            let text = message.payloadText
            let shown = text.prefix(previewCharacters)
            let more = shown.count < text.count || message.payload.isTruncated
            return " " + quoted(String(shown)) + (more ? "…" : "")
        }
        let bytes = message.payload.bytes.prefix(previewBytes)
        let hex = bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
        return " " + hex + (message.payload.totalSize > bytes.count ? " …" : "")
    }

    /// `"text"` with quotes, backslashes and control characters escaped, so a message cannot break the log line.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}
