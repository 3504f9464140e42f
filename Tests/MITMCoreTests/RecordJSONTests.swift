import Foundation
import MITMCore
import Testing

/// The hand-written JSON of `--events` lines and HAR entries (`JSONWriter`, written because a `JSONEncoder` per
/// record let the writers fall behind) says what the `Encodable` forms say: event lines byte for byte, HAR entries as the same JSON value.
@Suite struct RecordJSONTests {
    private static let awkward = "q\"b\\s/c\u{1}\u{1f}\n\r\t\u{8}\u{c}\u{7f} é 😀 <x>&"
    private let time = Date(timeIntervalSince1970: 1_764_200_000.4567)

    private func encoderLine(_ line: EventLine) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.format(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(line), as: UTF8.self)
    }

    private func exchange() -> ExchangeRecord {
        var headers = HTTPHeaders()
        headers.add(name: "Cookie", value: "a=1; b=\(Self.awkward)")
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "X-Odd", value: Self.awkward)
        var response = HTTPHeaders()
        response.add(name: "Set-Cookie", value: "s=v; Path=/; Domain=a.test; HttpOnly; Secure")
        response.add(name: "Content-Type", value: "text/plain")
        response.add(name: "Location", value: "https://a.test/next")
        var record = ExchangeRecord(
            connectionID: 42, scheme: "https", host: "a.test", port: 8443,
            request: HTTPRequestHead(method: "POST", target: "/p/q?x=%20y&z=\(Self.awkward)", headers: headers),
            response: HTTPResponseHead(status: 201, reason: "Created \(Self.awkward)", headers: response),
            requestBodyBytes: 11, responseBodyBytes: 5, started: time, finished: time.addingTimeInterval(0.0123))
        record.requestBody = CapturedBody(limit: 100)
        record.requestBody.append(Array("{\"k\":\"v\"}\n\t".utf8))
        record.responseBody = CapturedBody(limit: 3)
        record.responseBody.append(Array("hello".utf8))
        record.responseTrailers = ["Grpc-Status": "0"]
        record.timings.dns = 0.5
        record.timings.connect = 1.25
        record.timings.ssl = 2
        record.timings.send = 0.1 + 0.2
        record.timings.wait = 7
        record.timings.receive = -1
        record.serverAddress = "127.0.0.1"
        record.clientName = "curl (pid 7)"
        record.rules = ["map-local /p", Self.awkward]
        record.failure = "upstream: \(Self.awkward)"
        return record
    }

    private func verdict() -> ConnectionVerdict {
        var record = ConnectionVerdict(
            connectionID: 3, host: "b.test", port: 443,
            verdict: Verdict(kind: .refused, reason: .alert, alert: "bad_certificate"),
            tlsVersion: "TLSv1.3", alpn: "h2", offeredALPN: ["h2", "http/1.1"],
            shownCertificatePin: "sha256/abc+/=", startedAt: time, handshakeMilliseconds: 1.5,
            decidedAt: time, client: "127.0.0.1")
        record.identity = ClientIdentity(
            address: "127.0.0.1", stack: "curl",
            process: ClientProcess(pid: 7, executable: "/usr/bin/curl", commandLine: "curl -x …"))
        return record
    }

    private func webSocketMessage() -> WebSocketMessageRecord {
        var message = WebSocketMessage(direction: .receive, opcode: 2, captureLimit: 4)
        message.payload.append([0, 1, 2, 3, 4, 5])
        let endpoint = WebSocketEndpoint(
            session: WebSocketSessionID(connectionID: 5, stream: 3), host: "ws.test", port: 443,
            url: "https://ws.test/chat")
        return WebSocketMessageRecord(endpoint: endpoint, time: time, message: message)
    }

    private var events: [ProxyEvent] {
        let endpoint = WebSocketEndpoint(
            session: WebSocketSessionID(connectionID: 5), host: "ws.test", port: 443, url: "https://ws.test/")
        return [
            .exchange(exchange()),
            .exchange(
                ExchangeRecord(
                    connectionID: 1, scheme: "http", host: "::1", port: 80,
                    request: HTTPRequestHead(method: "GET", target: "/"), started: time, finished: time)),
            .request(connectionID: 1, host: "a.test", port: 443, method: "GET", url: "https://a.test/\(Self.awkward)"),
            .connectionOpened(connectionID: 2, host: "a.test", port: 443, peer: "127.0.0.1:5000"),
            .verdict(verdict()),
            .proxyProbe(verdict(), .pins),
            .tunnel(
                connectionID: 4, host: "t.test", port: 22, bytesUp: 10, bytesDown: 20, reason: "not TLS",
                passedThrough: true,
                started: Date(timeIntervalSince1970: 1_700_000_000)),
            .intercepted(connectionID: 4, host: "t.test", port: 443, tlsVersion: "TLSv1.2", alpn: nil),
            .clientTLSFailed(connectionID: 4, host: "t.test", port: 443, reason: Self.awkward),
            .upstreamFailed(connectionID: 4, host: "t.test", port: 443, reason: "refused"),
            .clientRefused(peer: "10.0.0.1:1", reason: "not private"),
            .badRequest(connectionID: 9, peer: "127.0.0.1:2", reason: "no Host"),
            .timedOut(connectionID: 9, host: nil, what: "waiting"),
            .webSocketMessage(webSocketMessage()),
            .webSocketClose(WebSocketCloseRecord(endpoint: endpoint, time: time, reason: "both sides closed")),
            .ruleFired(RuleFiring(connectionID: 1, host: "a.test", port: 443, rules: ["r"], action: "answered 503")),
        ]
    }

    @Test func everyEventLineIsTheEncodableLineByteForByte() throws {
        for event in events {
            let line = EventLine(event, time: time)
            #expect(line.json() == (try encoderLine(line)))
        }
    }

    @Test func aHAREntryIsTheSameJSONValueAsTheEncodableEntry() throws {
        let builder = HARBuilder(redact: false, bodyLimit: 1 << 20)
        var webSocket = builder.entry(
            exchange(), webSocketMessages: [builder.webSocketMessage(webSocketMessage())], omitted: 2)
        webSocket.comment = Self.awkward
        let entries = [
            builder.entry(exchange()), HARBuilder(redact: true).entry(exchange()), webSocket,
            builder.entry(
                ExchangeRecord(
                    connectionID: 1, scheme: "http", host: "a.test", port: 80,
                    request: HTTPRequestHead(method: "GET", target: "/"), started: time, finished: time)),
        ]
        for entry in entries {
            var json = JSONWriter()
            entry.write(to: &json)
            let written = try JSONSerialization.jsonObject(with: Data(json.bytes)) as? NSDictionary
            let encoded = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(entry)) as? NSDictionary
            #expect(written != nil && written == encoded)
        }
    }

    @Test func wholeNumbersAreWrittenAsSwiftPrintsThem() {
        for number in [0, 7, -7, 10, 99, 100, 1_764_200_000, Int.max, Int.min] {
            var json = JSONWriter()
            json.beginObject()
            json.field("n", number)
            json.field("d", Double(number % 1_000_000))
            json.endObject()
            #expect(String(decoding: json.bytes, as: UTF8.self) == "{\"n\":\(number),\"d\":\(number % 1_000_000)}")
        }
    }

    @Test func aClearedWriterWritesTheNextRecordAsANewOneWould() {
        var reused = JSONWriter()
        for event in events {
            reused.clear()
            EventLine(event, time: time).write(to: &reused)
            var fresh = JSONWriter()
            EventLine(event, time: time).write(to: &fresh)
            #expect(reused.bytes == fresh.bytes)
        }
    }

    @Test func timestampsAreFoundationsISO8601WithTruncatedMilliseconds() {
        var generator = SystemRandomNumberGenerator()
        let samples =
            [0, -1.5, 1_700_000_000.9996, 1_764_200_000.4567, 951_782_400.001, 4_102_444_799.999]
            + (0..<200).map { _ in Double.random(in: -2_000_000_000...4_000_000_000, using: &generator) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            let foundation = date.formatted(
                .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
            #expect(ISO8601.format(date) == foundation, "\(seconds)")
        }
    }
}
