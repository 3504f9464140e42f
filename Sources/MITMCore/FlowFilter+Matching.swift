extension FlowFilter {
    /// Whether `flow` passes the filter. Bodies are searched as kept (after gzip or deflate are undone), with a
    /// WebSocket's messages: those the client sent count as the request's, the others as the response's.
    package func matches(_ flow: Flow) -> Bool {
        switch self {
        case .text(let word): FlowFilterText.contains(FlowFilterText.searchText(of: flow), word)
        case .test(let test): test.matches(flow)
        case .not(let filter): !filter.matches(flow)
        case .and(let left, let right): left.matches(flow) && right.matches(flow)
        case .or(let left, let right): left.matches(flow) || right.matches(flow)
        }
    }
}

extension FlowFilter.Test {
    func matches(_ flow: Flow) -> Bool {
        switch self {
        case .all: return true
        case .domain(let value): return FlowFilterText.contains(flow.host, value)
        case .error: return FlowFilterText.isError(flow)
        case .rule:
            guard case .exchange(let record) = flow.content else { return false }
            return !record.rules.isEmpty || !flow.ruleFirings.isEmpty
        case .webSocket: return flow.webSocket != nil
        default: break
        }
        guard case .exchange(let record) = flow.content else { return false }
        switch self {
        case .method(let value): return record.request.method.lowercased() == value.lowercased()
        case .status(let range):
            return record.response.map { (range.lowest...range.highest).contains($0.status) } ?? false
        case .url(let value): return FlowFilterText.contains(record.url, value)
        case .noResponse: return record.response == nil
        case .hasResponse: return record.response != nil
        case .header(let value, let side):
            return sides(side, record).contains { headers in
                headers.contains { FlowFilterText.contains("\($0.name): \($0.value)", value) }
            }
        case .contentType(let value, let side):
            return sides(side, record).contains { FlowFilterText.contains($0.first("content-type") ?? "", value) }
        case .body(let value, let side):
            let needle = Array(value.utf8)
            if side != .response,
                FlowFilterText.contains(
                    FlowFilterText.decoded(record.requestBody.bytes, record.request.headers), needle)
            {
                return true
            }
            if side != .request, let head = record.response,
                FlowFilterText.contains(FlowFilterText.decoded(record.responseBody.bytes, head.headers), needle)
            {
                return true
            }
            let messages = flow.webSocket?.messages ?? []
            return messages.contains { entry in
                let message = entry.record.message
                let wanted = side == .either || (side == .request) == (message.direction == .send)
                return wanted && FlowFilterText.contains(message.payload.bytes, needle)
            }
        default: return false
        }
    }

    private func sides(_ side: FlowFilter.Side, _ record: ExchangeRecord) -> [HTTPHeaders] {
        switch side {
        case .request: [record.request.headers]
        case .response: record.response.map { [$0.headers] } ?? []
        case .either: [record.request.headers] + (record.response.map { [$0.headers] } ?? [])
        }
    }
}

/// Case-insensitive search over the words and bytes of flows.
enum FlowFilterText {
    /// What a word without `~` is looked for in: the same fields the page's plain-text filter searches.
    static func searchText(of flow: Flow) -> String {
        let row = FlowSummary(flow)
        return [row.method, row.url, row.status.map(String.init), row.verdict, row.how, row.failure, row.protocol]
            .compactMap { $0 }.joined(separator: " ")
    }

    static func isError(_ flow: Flow) -> Bool {
        switch flow.content {
        case .exchange(let record): record.failure != nil
        case .handshake(let verdict): verdict.verdict.kind != .intercepted && verdict.verdict.kind != .unused
        case .tunnel: false
        }
    }

    static func contains(_ text: String, _ value: String) -> Bool {
        contains(Array(text.utf8), Array(value.utf8))
    }

    /// Whether `needle` occurs in `haystack`, ASCII letters in either case.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        let wanted = needle.map(lower)
        let first = wanted[0]
        return haystack.withUnsafeBufferPointer { bytes in
            var start = 0
            while start <= bytes.count - wanted.count {
                if lower(bytes[start]) == first {
                    var offset = 1
                    while offset < wanted.count, lower(bytes[start + offset]) == wanted[offset] { offset += 1 }
                    if offset == wanted.count { return true }
                }
                start += 1
            }
            return false
        }
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }

    /// A kept body as its sender meant it: gzip and deflate undone (as far as the kept bytes go), others as they are.
    static func decoded(_ bytes: [UInt8], _ headers: HTTPHeaders) -> [UInt8] {
        guard !bytes.isEmpty, let coding = headers.first("content-encoding")?.lowercased() else { return bytes }
        switch coding {
        case "gzip", "x-gzip", "deflate": return BodyInflater.inflate(bytes) ?? bytes
        default: return bytes
        }
    }
}
