import Foundation

/// Turns exchange records and verdicts into HAR 1.2 structures.
package struct HARBuilder: Sendable {
    /// Whether `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` values are masked.
    package var redact: Bool

    /// Bytes of each body shown (`--body-limit`; records may hold more, e.g. JSON request bodies).
    package var bodyLimit: Int

    /// A builder; `redact` masks credentials.
    package init(redact: Bool, bodyLimit: Int = .max) {
        self.redact = redact
        self.bodyLimit = bodyLimit
    }

    private static let sensitive: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    private static let masked = "REDACTED"

    /// The HAR entry of one exchange.
    package func entry(_ record: ExchangeRecord) -> HAREntry {
        let t = record.timings
        let connect = t.connect < 0 ? -1 : t.connect + max(0, t.ssl)
        let timings = HARTimings(
            blocked: -1, dns: rounded(t.dns), connect: rounded(connect), send: rounded(t.send),
            wait: rounded(t.wait), receive: rounded(t.receive), ssl: rounded(t.ssl))
        let total = [timings.dns, timings.connect, timings.send, timings.wait, timings.receive].filter { $0 > 0 }
            .reduce(0, +)
        var entry = HAREntry(
            startedDateTime: ISO8601.format(record.started), time: rounded(total), request: request(record),
            response: response(record), cache: HARCache(), timings: timings,
            serverIPAddress: record.serverAddress, connection: String(record.connectionID),
            _rule: record.rules.isEmpty ? nil : record.rules.joined(separator: ", "), _client: record.clientName)
        entry._replayOf = record.replayOf
        return entry
    }

    /// The entry of a WebSocket's opening handshake with its messages; `omitted` counts messages not kept.
    package func entry(_ record: ExchangeRecord, webSocketMessages: [HARWebSocketMessage], omitted: Int) -> HAREntry {
        var entry = entry(record)
        entry._resourceType = "websocket"
        entry._webSocketMessages = webSocketMessages
        if omitted > 0 {
            entry.comment =
                "\(omitted) later WebSocket messages are not in this HAR (it keeps at most "
                + "\(HARWebSocketLimits.messages) messages and \(HARWebSocketLimits.bytes / (1024 * 1024)) MiB of data per WebSocket, "
                + "\(HARWebSocketLimits.totalBytes / (1024 * 1024)) MiB for all open ones); "
                + "the --events file has every one"
        }
        return entry
    }

    /// A WebSocket message in DevTools' shape, its data cut to `bodyLimit`.
    package func webSocketMessage(_ record: WebSocketMessageRecord) -> HARWebSocketMessage {
        var message = record.message
        message.payload = message.payload.limited(to: bodyLimit)
        let data = message.recordedData
        let truncated = message.payload.isTruncated
        return HARWebSocketMessage(
            type: message.direction.rawValue, time: record.time.timeIntervalSince1970,
            opcode: Int(message.opcode), data: data.text,
            _size: truncated ? message.payload.totalSize : nil, _truncated: truncated ? true : nil,
            _compressed: message.compressed ? true : nil, _closeCode: message.closeCode,
            _closeReason: message.closeReason, _malformed: message.problem)
    }

    /// The `_tlsErrors` entry of a refused, failed or inconclusive connection, or of one that accepted an invalid certificate.
    package func tlsError(_ record: ConnectionVerdict) -> HARTLSError {
        HARTLSError(
            time: ISO8601.format(record.decidedAt), connection: String(record.connectionID), host: record.host,
            port: record.port, verdict: record.verdict.kind.rawValue, reason: record.verdict.reason.rawValue,
            alert: record.verdict.alert, detail: record.verdict.detail, tlsVersion: record.tlsVersion,
            offeredALPN: record.offeredALPN, profile: record.profile?.description,
            comment: record.acceptedInvalidCertificate ? VerdictText.acceptedInvalid(record.profile) : nil,
            _client: record.identity?.label, _clientIdentity: record.identity)
    }

    private func request(_ record: ExchangeRecord) -> HARRequest {
        let head = record.request
        var postData: HARPostData?
        if record.requestBody.totalSize > 0 || head.headers.contains("content-length")
            || head.headers.contains("transfer-encoding")
        {
            let mime = head.headers.first("content-type") ?? ""
            let body = HARBodyText(
                record.requestBody.limited(to: bodyLimit), mimeType: mime,
                contentEncoding: head.headers.first("content-encoding"))
            postData = HARPostData(
                mimeType: mime, params: [], text: body.text, comment: body.comment,
                _encoding: body.encoding, _truncated: body.truncated ? true : nil)
        }
        let url = record.url
        return HARRequest(
            method: head.method, url: url, httpVersion: record.httpVersion,
            cookies: requestCookies(head.headers), headers: headers(head.headers),
            queryString: Self.query(of: url), postData: postData,
            headersSize: head.serializedCount, bodySize: record.requestBodyBytes)
    }

    private func response(_ record: ExchangeRecord) -> HARResponse {
        guard let head = record.response else {
            return HARResponse(
                status: 0, statusText: "", httpVersion: record.httpVersion, cookies: [], headers: [],
                content: HARContent(size: 0, mimeType: "x-unknown"), redirectURL: "", headersSize: -1,
                bodySize: -1, _error: record.failure ?? "no response")
        }
        let mime = head.headers.first("content-type") ?? "x-unknown"
        let body = HARBodyText(
            record.responseBody.limited(to: bodyLimit), mimeType: mime,
            contentEncoding: head.headers.first("content-encoding"))
        let content = HARContent(
            size: record.responseBodyBytes, mimeType: mime, text: record.responseBodyBytes > 0 ? body.text : nil,
            encoding: record.responseBodyBytes > 0 ? body.encoding : nil, comment: body.comment,
            _truncated: body.truncated ? true : nil)
        return HARResponse(
            status: head.status, statusText: head.reason, httpVersion: record.httpVersion,
            cookies: responseCookies(head.headers), headers: headers(head.headers), content: content,
            redirectURL: head.headers.first("location") ?? "", headersSize: head.serializedCount,
            bodySize: record.responseBodyBytes, _error: record.failure,
            _trailers: record.responseTrailers.map { headers($0) })
    }

    private func headers(_ headers: HTTPHeaders) -> [HARNameValue] {
        headers.map { field in
            HARNameValue(
                name: field.name,
                value: redact && Self.sensitive.contains(field.name.lowercased()) ? Self.masked : field.value)
        }
    }

    private func requestCookies(_ headers: HTTPHeaders) -> [HARCookie] {
        headers.values("cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first, !name.isEmpty else { return nil }
            return HARCookie(name: name, value: redact ? Self.masked : (parts.count > 1 ? parts[1] : ""))
        }
    }

    private func responseCookies(_ headers: HTTPHeaders) -> [HARCookie] {
        headers.values("set-cookie").compactMap { line in
            let segments = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = segments.first, let equals = first.firstIndex(of: "=") else { return nil }
            var cookie = HARCookie(
                name: String(first[..<equals]),
                value: redact ? Self.masked : String(first[first.index(after: equals)...]))
            for attribute in segments.dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                switch parts[0].lowercased() {
                case "path": cookie.path = parts.count > 1 ? parts[1] : nil
                case "domain": cookie.domain = parts.count > 1 ? parts[1] : nil
                case "expires": cookie.expires = parts.count > 1 ? parts[1] : nil
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: continue
                }
            }
            return cookie
        }
    }

    /// The decoded query parameters of `url`.
    static func query(of url: String) -> [HARNameValue] {
        // Most URLs have no query: a `Character` search walks grapheme clusters (3 k instructions per URL), the bytes not.
        guard url.utf8.contains(UInt8(ascii: "?")), let mark = url.firstIndex(of: "?") else { return [] }
        return url[url.index(after: mark)...].split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let decode = { (text: String) in text.removingPercentEncoding ?? text }
            return HARNameValue(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    private func rounded(_ value: Double) -> Double {
        value < 0 ? -1 : (value * 1000).rounded() / 1000
    }
}

/// How much of a WebSocket's messages a HAR holds until the WebSocket ends (its entry is written then).
package enum HARWebSocketLimits {
    /// Messages kept per WebSocket.
    package static let messages = 10_000
    /// Bytes of message data kept per WebSocket.
    package static let bytes = 64 * 1024 * 1024
    /// Bytes of message data kept for all WebSockets still open.
    package static let totalBytes = 256 * 1024 * 1024
}

/// A captured body as HAR text: UTF-8 text for textual types, base64 otherwise.
struct HARBodyText {
    let text: String
    let encoding: String?
    let truncated: Bool
    let comment: String?

    init(_ body: CapturedBody, mimeType: String, contentEncoding: String?) {
        let textual = Self.isTextual(mimeType) && (contentEncoding == nil || contentEncoding == "identity")
        if textual, let decoded = String(validating: body.bytes, as: UTF8.self) {
            text = decoded
            encoding = nil
        } else {
            text = Data(body.bytes).base64EncodedString()
            encoding = "base64"
        }
        truncated = body.isTruncated
        if body.isTruncated {
            comment =
                body.limit == 0
                ? "body not recorded (\(body.totalSize) bytes relayed)"
                : "truncated: first \(body.bytes.count) of \(body.totalSize) bytes recorded (--body-limit)"
        } else {
            comment = nil
        }
    }

    /// Compared byte by byte, ASCII letters in any case: `lowercased()` and `firstRange(of:)` (generic, with a metadata
    /// lookup per step) took 340 k instructions per HAR entry, more than the rest of the recording together.
    static func isTextual(_ mimeType: String) -> Bool {
        var mimeType = mimeType
        return mimeType.withUTF8 { type in
            startsWith(type, textPrefix, at: 0)
                || textualWords.contains { word in
                    type.count >= word.count
                        && (0...(type.count - word.count)).contains { startsWith(type, word, at: $0) }
                }
        }
    }

    /// Whether `type` holds `word` (lowercase ASCII) at `offset`, ignoring the case of ASCII letters.
    private static func startsWith(_ type: UnsafeBufferPointer<UInt8>, _ word: [UInt8], at offset: Int) -> Bool {
        guard type.count - offset >= word.count else { return false }
        for index in word.indices {
            let byte = type[offset + index]
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            guard lowered == word[index] else { return false }
        }
        return true
    }

    private static let textPrefix = Array("text/".utf8)
    private static let textualWords = ["json", "xml", "javascript", "x-www-form-urlencoded", "graphql", "csv", "yaml"]
        .map { Array($0.utf8) }
}
