import Foundation
import MITMCore
import MITMRules

/// What a rule answers a request with instead of its upstream: a head of its own, a file (or part of
/// one) streamed as the body, or a fault.
struct RuledAnswer {
    /// The response head (nil for a fault before the head).
    var head: HTTPResponseHead?
    /// The file (opened when the request was decided) whose bytes it sends are the body.
    var file: LocalFileSender?
    /// The exchange's machine, making the answer: it says what the relay sends and breaks.
    var exchange: RuledExchange
    /// The rules' names and what they did, for the record.
    var decision: RuleDecision { exchange.decision }
    /// What was done, in words, for the rule's log line.
    var action: String

    /// Bodies from `bodyFile` and `respond.bodyFile` are read whole: they are for small mock payloads.
    static let wholeFileLimit = 8 * 1024 * 1024

    /// The answer to `request` that the machine's `answer` makes; the proxy's own error when a file is missing (the
    /// machine told so).
    static func make(
        _ answer: RuleDecision.LocalAnswer, for request: HTTPRequestHead, exchange: inout RuledExchange
    ) -> LocalResponse {
        let response = make(answer, for: request, by: exchange)
        if response.rule == nil { _ = try? exchange.handle(.localAnswerRefused) }
        return response
    }

    private static func make(
        _ answer: RuleDecision.LocalAnswer, for request: HTTPRequestHead, by exchange: RuledExchange
    )
        -> LocalResponse
    {
        switch answer {
        case .fault(let fault, let rule):
            var response = LocalResponse(
                status: 0, reasonPhrase: "", contentType: "", body: [], reasonText: "\(fault.rawValue) (rule \(rule))")
            response.rule = RuledAnswer(
                head: nil, exchange: exchange,
                action: fault.isReset
                    ? "reset the connection instead of answering" : "closed the connection instead of answering")
            return response
        case .fixed(let fixed, let rule):
            var body = Array((fixed.body ?? "").utf8)
            var contentType = "text/plain; charset=utf-8"
            if fixed.status == 204 || fixed.status == 304 {
                body = []
            } else if let path = fixed.bodyFile {
                switch readWhole(path) {
                case .success(let bytes):
                    body = bytes
                    contentType = MediaType.forFile(path)
                case .failure(let reason):
                    return .error(status: 500, reason: "rule \(rule): \(reason)")
                }
            } else if fixed.body == nil {
                body = Array("\(fixed.status) \(LocalResponse.phrase(fixed.status)) (mitm-proxy rule \(rule))\n".utf8)
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: contentType)
            for field in fixed.headers { headers.replaceOrAdd(name: field.name, value: field.value) }
            headers.replaceOrAdd(name: "Content-Length", value: String(body.count))
            let head = HTTPResponseHead(
                status: fixed.status, reason: LocalResponse.phrase(fixed.status), headers: headers)
            var response = LocalResponse(
                status: fixed.status, reasonPhrase: head.reason, contentType: contentType, body: body,
                reasonText: "answered \(fixed.status) by rule \(rule)")
            response.rule = RuledAnswer(head: head, exchange: exchange, action: "answered \(fixed.status)")
            return response
        case .mapLocal(let root, let remainder, let rule):
            return mapLocal(root: root, remainder: remainder, rule: rule, request: request, exchange: exchange)
        }
    }

    private static func mapLocal(
        root: String, remainder: String, rule: String, request: HTTPRequestHead, exchange: RuledExchange
    ) -> LocalResponse {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else {
            return .error(status: 404, reason: "rule \(rule): \(root) does not exist")
        }
        guard let path = LocalFilePath.resolve(root: root, isDirectory: isDirectory.boolValue, remainder: remainder)
        else {
            return .error(status: 404, reason: "rule \(rule): the path \"\(remainder)\" leaves \(root)")
        }
        // Opened beneath its directory; named (and typed) by the path asked for.
        let descriptor: Int32
        switch confined(path, to: isDirectory.boolValue ? root : ConfinedFile.parent(of: root)) {
        case .success(let opened): descriptor = opened
        case .failure(let failure): return .error(status: failure.status, reason: "rule \(rule): \(failure)")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            return .error(status: 404, reason: "rule \(rule): no file \(path)")
        }
        let size = Int(info.st_size)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: MediaType.forFile(path))
        headers.add(name: "Accept-Ranges", value: "bytes")
        let range =
            request.headers.contains("if-range") ? .whole : ByteRange.of(request.headers.first("range"), size: size)
        var status = 200
        var offset = 0
        var length = size
        switch range {
        case .whole:
            break
        case .partial(let start, let count):
            (status, offset, length) = (206, start, count)
            headers.add(name: "Content-Range", value: "bytes \(start)-\(start + count - 1)/\(size)")
        case .unsatisfiable:
            (status, length) = (416, 0)
            headers.add(name: "Content-Range", value: "bytes */\(size)")
        }
        headers.add(name: "Content-Length", value: String(length))
        let head = HTTPResponseHead(status: status, reason: LocalResponse.phrase(status), headers: headers)
        var response = LocalResponse(
            status: status, reasonPhrase: head.reason, contentType: MediaType.forFile(path), body: [],
            reasonText: "answered from \(path) by rule \(rule)")
        let part = status == 206 ? " (bytes \(offset)-\(offset + length - 1) of \(size))" : ""
        if length == 0 { close(descriptor) }
        let file = length > 0 ? LocalFileSender(descriptor: descriptor, offset: offset, length: length) : nil
        response.rule = RuledAnswer(
            head: head, file: file, exchange: exchange,
            action: status == 416
                ? "answered 416: the range is outside \(path) (\(size) bytes)"
                : "answered \(status) from \(path)\(part), \(ByteCountText.format(length))")
        return response
    }

    /// A descriptor for reading `path` opened beneath `directory` (no symbolic link leading out of it followed), or why
    /// it may not be served.
    static func confined(_ path: String, to directory: String) -> Result<Int32, RuledAnswerFailure> {
        ConfinedFile.open(path, beneath: directory).mapError { refusal in
            switch refusal {
            case .missing: RuledAnswerFailure("no file \(path)", status: 404)
            case .outside:
                RuledAnswerFailure("\(path) leads outside \(directory) through a symbolic link: refused", status: 403)
            case .unopenable(let reason): RuledAnswerFailure("cannot open \(path): \(reason)", status: 403)
            }
        }
    }

    /// The bytes of a small file that stays inside its own directory, or why not.
    static func readWhole(_ path: String) -> Result<[UInt8], RuledAnswerFailure> {
        let descriptor: Int32
        switch confined(path, to: ConfinedFile.parent(of: path)) {
        case .success(let opened): descriptor = opened
        case .failure(let failure): return .failure(failure)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(RuledAnswerFailure("no file \(path)"))
        }
        guard info.st_size <= wholeFileLimit else {
            return .failure(RuledAnswerFailure("\(path) is larger than 8 MiB; use mapLocal for big bodies"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return .failure(RuledAnswerFailure("cannot read \(path)")) }
            filled += count
        }
        return .success(bytes)
    }
}

/// Why a rule's file could not be used, and the status that says so when it was the whole answer.
struct RuledAnswerFailure: Error, CustomStringConvertible {
    let description: String
    let status: Int
    init(_ description: String, status: Int = 500) {
        self.description = description
        self.status = status
    }
}

extension LocalResponse {
    /// The reason phrase for `status` (a generic one for statuses the proxy does not name).
    static func phrase(_ status: Int) -> String {
        reasonPhrases[status] ?? ruleReasonPhrases[status]
            ?? (status < 300 ? "OK" : status < 400 ? "Redirect" : status < 500 ? "Client Error" : "Server Error")
    }

    static let ruleReasonPhrases: [Int: String] = [
        201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content", 301: "Moved Permanently",
        302: "Found",
        304: "Not Modified", 401: "Unauthorized", 403: "Forbidden", 409: "Conflict", 410: "Gone",
        416: "Range Not Satisfiable",
        418: "I'm a teapot", 422: "Unprocessable Content", 429: "Too Many Requests", 500: "Internal Server Error",
        503: "Service Unavailable",
    ]
}
