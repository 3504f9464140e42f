import Foundation
import MITMCore
@_spi(CommandLine) import MITMRecording
import TestSupport
import Testing

/// How the HAR writer holds a WebSocket's handshake entry until the WebSocket ends, and what it keeps of it.
@Suite struct HARWebSocketTests {
    private let session = WebSocketSessionID(connectionID: 7)

    private func handshake() -> ExchangeRecord {
        var record = ExchangeRecord(
            connectionID: 7, scheme: "https", host: "chat.test", port: 443,
            request: HTTPRequestHead(method: "GET", target: "/ws", headers: ["Upgrade": "websocket"]),
            response: HTTPResponseHead(status: 101, reason: "Switching Protocols"),
            started: Date(), finished: Date())
        record.webSocket = session
        return record
    }

    private func message(_ text: String, _ direction: WebSocketDirection = .send) -> ProxyEvent {
        var message = WebSocketMessage(direction: direction, opcode: 1, captureLimit: 1 << 20)
        message.payload.append(Array(text.utf8))
        let endpoint = WebSocketEndpoint(session: session, host: "chat.test", port: 443, url: "https://chat.test/ws")
        return .webSocketMessage(WebSocketMessageRecord(endpoint: endpoint, time: Date(), message: message))
    }

    private func close() -> ProxyEvent {
        let endpoint = WebSocketEndpoint(session: session, host: "chat.test", port: 443, url: "https://chat.test/ws")
        return .webSocketClose(WebSocketCloseRecord(endpoint: endpoint, time: Date(), reason: "both sides closed"))
    }

    private func entries(_ path: String) throws -> [JSON] {
        JSON(parsing: try String(contentsOfFile: path, encoding: .utf8))["log"]["entries"].array
    }

    private func path() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ws-\(UUID().uuidString).har").path
    }

    @Test func theEntryIsWrittenWhenTheWebSocketEndsWithItsMessages() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let har = try HARWriter(path: file, redact: false) { Issue.record("HAR: \($0)") }
        har.record(.exchange(handshake()))
        har.record(message("one"))
        har.record(message("two", .receive))
        har.record(close())
        har.record(message("after the close: not recorded"))
        har.finish()
        let written = try entries(file)
        #expect(written.count == 1)
        #expect(written.first?["_webSocketMessages"].array.map { $0["data"].string ?? "" } == ["one", "two"])
        #expect(written.first?["_webSocketMessages"].array.map { $0["type"].string ?? "" } == ["send", "receive"])
        #expect(written.first?["comment"].isNull == true)
    }

    @Test func aWebSocketStillOpenAtTheEndIsWrittenAsFarAsItWent() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let har = try HARWriter(path: file, redact: false) { Issue.record("HAR: \($0)") }
        har.record(.exchange(handshake()))
        har.record(message("still open"))
        har.finish()
        #expect(try entries(file).first?["_webSocketMessages"][0]["data"].string == "still open")
    }

    @Test func messagesBeyondTheLimitAreCountedNotKept() throws {
        let file = path()
        defer { try? FileManager.default.removeItem(atPath: file) }
        let har = try HARWriter(path: file, redact: false) { Issue.record("HAR: \($0)") }
        har.record(.exchange(handshake()))
        for index in 0..<(HARWebSocketLimits.messages + 3) { har.record(message("m\(index)")) }
        har.record(close())
        har.finish()
        let entry = try #require(try entries(file).first)
        #expect(entry["_webSocketMessages"].array.count == HARWebSocketLimits.messages)
        #expect(entry["_webSocketMessages"].array.last?["data"].string == "m\(HARWebSocketLimits.messages - 1)")
        #expect(entry["comment"].string?.hasPrefix("3 later WebSocket messages are not in this HAR") == true)
    }
}
