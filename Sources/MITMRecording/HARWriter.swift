import Foundation
import MITMCore
import Synchronization

/// Records exchanges into a HAR 1.2 file as the run goes: each entry is gathered when its exchange ends and handed to
/// the kernel with the others of its batch of events (`flush()`, or every 64 KiB); `finish()` closes the JSON, adding refused and failed TLS
/// connections under the custom `log._tlsErrors`. A write error is reported at once.
///
/// A WebSocket's handshake entry waits until the WebSocket ends, collecting its messages for
/// `_webSocketMessages` (within `HARWebSocketLimits`); `finish()` writes the ones still open.
@_spi(CommandLine) public final class HARWriter: Sendable {
    /// A WebSocket's handshake waiting for its messages.
    private struct OpenWebSocket {
        var record: ExchangeRecord
        var messages: [HARWebSocketMessage] = []
        var bytes = 0
        var omitted = 0
    }

    private struct State {
        var entries = 0
        var webSockets: [WebSocketSessionID: OpenWebSocket] = [:]
        var webSocketOrder: [WebSocketSessionID] = []
        var webSocketBytes = 0
        var tlsErrors: [Int: ConnectionVerdict] = [:]
        var tlsErrorOrder: [Int] = []
        var batch = RecordBatch()
        /// Where each entry is written before it joins the batch, reused so that its storage is not grown again per entry.
        var json = JSONWriter()
        var failed = false
        var finished = false
    }

    private let path: String
    private let descriptor: Int32
    private let builder: HARBuilder
    private let state = Mutex(State())
    private let onError: @Sendable (String) -> Void

    /// Creates `path` and writes the HAR header; fails now if the file cannot be written.
    public init(path: String, redact: Bool, bodyLimit: Int = .max, onError: @escaping @Sendable (String) -> Void)
        throws(RecordingFileError)
    {
        self.path = path
        self.builder = HARBuilder(redact: redact, bodyLimit: bodyLimit)
        self.onError = onError
        let opened = PrivateFile.openForWriting(path)
        guard opened >= 0 else {
            throw RecordingFileError(
                .har, path: path, problem: "cannot open for writing: \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        let header =
            #"{"log":{"version":"1.2","creator":{"name":"mitm-proxy","version":"\#(ProductVersion.mitmProxy)"},"pages":[],"entries":["#
            + "\n"
        if let failure = FileOutput.write(Array(header.utf8), to: opened) {
            close(opened)
            throw RecordingFileError(.har, path: path, problem: "cannot write: \(failure)")
        }
    }

    /// Records what the event carries: an exchange as an entry, a non-intercepted verdict for `_tlsErrors`.
    public func record(_ event: ProxyEvent) {
        switch event {
        case .exchange(let exchange):
            if let session = exchange.webSocket {
                state.withLock { state in
                    guard !state.finished, state.webSockets[session] == nil else { return }
                    state.webSockets[session] = OpenWebSocket(record: exchange)
                    state.webSocketOrder.append(session)
                }
                return
            }
            writeEntry(builder.entry(exchange))
        case .webSocketMessage(let record):
            let message = builder.webSocketMessage(record)
            let size = message.data.utf8.count
            state.withLock { state in
                guard var open = state.webSockets[record.endpoint.session] else { return }
                if open.messages.count >= HARWebSocketLimits.messages || open.bytes + size > HARWebSocketLimits.bytes
                    || state.webSocketBytes + size > HARWebSocketLimits.totalBytes
                {
                    open.omitted += 1
                } else {
                    open.messages.append(message)
                    open.bytes += size
                    state.webSocketBytes += size
                }
                state.webSockets[record.endpoint.session] = open
            }
        case .webSocketClose(let record):
            let open: OpenWebSocket? = state.withLock { state in
                guard let open = state.webSockets.removeValue(forKey: record.endpoint.session) else { return nil }
                state.webSocketOrder.removeAll { $0 == record.endpoint.session }
                state.webSocketBytes -= open.bytes
                return open
            }
            if let open {
                writeEntry(builder.entry(open.record, webSocketMessages: open.messages, omitted: open.omitted))
            }
        case .verdict(let verdict):
            state.withLock { state in
                if (verdict.verdict.kind == .intercepted || verdict.verdict.kind == .unused)
                    && !verdict.acceptedInvalidCertificate
                {
                    state.tlsErrors.removeValue(forKey: verdict.connectionID)
                    return
                }
                if state.tlsErrors[verdict.connectionID] == nil { state.tlsErrorOrder.append(verdict.connectionID) }
                state.tlsErrors[verdict.connectionID] = verdict
            }
        default:
            return
        }
    }

    private func writeEntry(_ entry: HAREntry) {
        let failure: String? = state.withLock { state in
            guard !state.finished, !state.failed else { return nil }
            state.json.clear()
            if state.entries > 0 { state.json.raw(Self.entrySeparator) }
            entry.write(to: &state.json)
            state.entries += 1
            return Self.perform(state.batch.record(state.json.bytes), to: descriptor, state: &state)
        }
        if let failure { onError("cannot write HAR \(path): \(failure); exchanges are no longer recorded") }
    }

    /// Writes the entries gathered so far (the recording queue calls it after each batch of events).
    public func flush() {
        let failure: String? = state.withLock { state in
            guard !state.finished, !state.failed else { return nil }
            return Self.perform(state.batch.endOfBatch(), to: descriptor, state: &state)
        }
        if let failure { onError("cannot write HAR \(path): \(failure); exchanges are no longer recorded") }
    }

    /// Before every entry but the first.
    private static let entrySeparator = Array(",\n".utf8)

    private static func perform(_ action: RecordBatch.Action, to descriptor: Int32, state: inout State) -> String? {
        guard case .write(let bytes) = action else { return nil }
        guard let failure = FileOutput.write(bytes, to: descriptor) else { return nil }
        state.batch.writeFailed()
        state.failed = true
        return failure
    }

    /// Writes the end of the JSON and closes the file, with WebSockets still open as far as they went. Later
    /// events are ignored. `droppedEvents`: events the recording queue dropped in the run, said in the file, since some of
    /// them were exchanges this file then lacks.
    public func finish(droppedEvents: Int = 0) {
        let open: [OpenWebSocket] = state.withLock { state in
            let open = state.webSocketOrder.compactMap { state.webSockets[$0] }
            state.webSockets.removeAll()
            state.webSocketOrder.removeAll()
            return open
        }
        for webSocket in open {
            writeEntry(
                builder.entry(webSocket.record, webSocketMessages: webSocket.messages, omitted: webSocket.omitted))
        }
        flush()
        let failure: String? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            let errors = state.tlsErrorOrder.compactMap { state.tlsErrors[$0] }.map(builder.tlsError)
            let encoded = (try? JSONEncoder().encode(errors)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
            let dropped =
                droppedEvents > 0
                ? ",\"_droppedEvents\":\(droppedEvents),\"comment\":\"INCOMPLETE: \(droppedEvents) events of the run were dropped because the "
                    + "recording outputs stopped taking them; some exchanges are missing from this file\"" : ""
            // After a failed write the writer already said so; the file is left as it is.
            let failure =
                state.failed
                ? nil : FileOutput.write(Array("\n],\"_tlsErrors\":\(encoded)\(dropped)}}\n".utf8), to: descriptor)
            fsync(descriptor)
            close(descriptor)
            return failure
        }
        if let failure { onError("cannot finish HAR \(path): \(failure)") }
    }
}
