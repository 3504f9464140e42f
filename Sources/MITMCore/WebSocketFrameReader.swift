/// Reads the WebSocket frames (RFC 6455) of one direction from a copy of the bytes as they pass, and turns
/// them into messages: fragments joined, masks removed, `permessage-deflate` inflated. It never changes or
/// holds back the relayed bytes; it only watches them, with memory bounded by the capture limit.
///
/// A frame that breaks the protocol is reported on its message (`problem`). When the framing itself can no
/// longer be trusted (a reserved opcode or bit, a continuation with nothing to continue, a length with the top
/// bit set, data that does not inflate), the reader reports it once and stops: every later byte of the
/// direction is relayed unread, as the endpoints see it.
package struct WebSocketFrameReader {
    /// A message that inflates to more than this stops the reading of its direction: inflating costs the proxy
    /// as much as the receiver, and a small compressed frame can inflate to gigabytes.
    package static let inflatedMessageLimit = 64 * 1024 * 1024

    enum State {
        /// Collecting a frame header (2 to 14 bytes).
        case header([UInt8])
        /// Inside a frame's payload.
        case payload(Frame)
        /// The framing broke: nothing more is read.
        case stopped
    }

    struct Frame {
        let fin: Bool
        let opcode: UInt8
        let mask: [UInt8]?
        let length: UInt64
        var consumed: UInt64 = 0
        /// A control frame's message, filled as its payload arrives (data frames fill `current`).
        var control: WebSocketMessage?
    }

    /// A data message whose frames are still arriving.
    struct DataMessage {
        var message: WebSocketMessage
        var utf8 = UTF8Validator()
    }

    /// Whose frames this reader reads.
    package let direction: WebSocketDirection
    let captureLimit: Int
    let handshake: WebSocketHandshake
    let inflater: WebSocketInflater?
    let forgetWindow: Bool
    var state = State.header([])
    var current: DataMessage?
    var output: [WebSocketMessage] = []
    var scratch: [UInt8] = []

    /// A reader of `direction`'s frames on a WebSocket opened by `handshake`, keeping at most `captureLimit`
    /// payload bytes of each message.
    package init(direction: WebSocketDirection, handshake: WebSocketHandshake, captureLimit: Int) {
        self.direction = direction
        self.handshake = handshake
        self.captureLimit = max(0, captureLimit)
        inflater = handshake.deflate == nil ? nil : WebSocketInflater()
        forgetWindow =
            direction == .send
            ? handshake.deflate?.clientNoContextTakeover == true
            : handshake.deflate?.serverNoContextTakeover == true
    }

    /// Whether the reader gave up on this direction (everything after is relayed unread).
    package var isStopped: Bool {
        if case .stopped = state { true } else { false }
    }

    /// Reads the next bytes of the direction; returns the messages they completed.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [WebSocketMessage] {
        var index = 0
        while index < bytes.count {
            switch state {
            case .stopped:
                index = bytes.count
            case .header(var header):
                let wanted = header.count < 2 ? 2 : Self.headerLength(header[0], header[1])
                let take = min(wanted - header.count, bytes.count - index)
                header.append(contentsOf: bytes[index..<(index + take)])
                index += take
                if header.count >= 2 && header.count == Self.headerLength(header[0], header[1]) {
                    state = .header([])
                    begin(header)
                } else {
                    state = .header(header)
                }
            case .payload(var frame):
                let take = Int(min(frame.length - frame.consumed, UInt64(bytes.count - index)))
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)])
                index += take
                state = .stopped  // while the frame is out of `state`, so that its buffers are not copied
                if let problem = read(chunk, of: &frame) {
                    // The whole frame counts, however far the reading got: the bytes are relayed all the same.
                    current?.message.wireSize += Int(clamping: frame.length - frame.consumed - UInt64(take))
                    stopInsideMessage(problem)
                    continue
                }
                frame.consumed += UInt64(take)
                if frame.consumed == frame.length {
                    state = .header([])
                    end(frame)
                } else {
                    state = .payload(frame)
                }
            }
        }
        return takeOutput()
    }

    /// Reads the next bytes of the direction; returns the messages they completed.
    package mutating func feed(_ bytes: [UInt8]) -> [WebSocketMessage] {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The direction ended: a frame or a fragmented message cut short is reported.
    package mutating func finish() -> [WebSocketMessage] {
        switch state {
        case .header(let header) where !header.isEmpty:
            var message = WebSocketMessage(direction: direction, opcode: header[0] & 0x0F, captureLimit: 0)
            message.problem = "the connection ended inside a frame header"
            endPartial()
            output.append(message)
        case .payload(let frame):
            let cut =
                "the connection ended inside a frame (\(frame.consumed) of its \(frame.length) payload bytes came)"
            if var control = frame.control {
                control.problem = Self.joined(control.problem, cut)
                control.payload = control.payload.limited(to: captureLimit)
                output.append(control)
            }
            endPartial(cut)
        case .header, .stopped:
            endPartial()
        }
        state = .stopped
        return takeOutput()
    }

    // MARK: frames

    /// A frame header's length, known from its first two bytes.
    static func headerLength(_ first: UInt8, _ second: UInt8) -> Int {
        let length = second & 0x7F
        return 2 + (length == 126 ? 2 : length == 127 ? 8 : 0) + (second & 0x80 != 0 ? 4 : 0)
    }

    private mutating func begin(_ header: [UInt8]) {
        let fin = header[0] & 0x80 != 0
        let rsv1 = header[0] & 0x40 != 0
        let rsv23 = header[0] & 0x30 != 0
        let opcode = header[0] & 0x0F
        let masked = header[1] & 0x80 != 0
        var length = UInt64(header[1] & 0x7F)
        var offset = 2
        if length == 126 {
            length = UInt64(header[2]) << 8 | UInt64(header[3])
            offset = 4
        } else if length == 127 {
            length = header[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
            offset = 10
        }
        let mask = masked ? Array(header[offset..<(offset + 4)]) : nil
        let isControl = WebSocketMessage.isControl(opcode)
        if let unreadable = unreadable(opcode: opcode, rsv1: rsv1, rsv23: rsv23, length: length) {
            stop(unreadable, opcode: opcode, wireSize: length)
            return
        }
        var problems: [String] = []
        if masked != (direction == .send) {
            problems.append(
                direction == .send
                    ? "an unmasked frame from the client (clients must mask every frame)"
                    : "a masked frame from the server (servers must not mask)")
        }
        var frame = Frame(fin: fin, opcode: opcode, mask: mask, length: length)
        if isControl {
            if !fin { problems.append("a fragmented control frame") }
            if length > 125 { problems.append("a control frame of \(length) bytes (at most 125 allowed)") }
            var message = WebSocketMessage(direction: direction, opcode: opcode, captureLimit: max(captureLimit, 125))
            message.problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
            frame.control = message
        } else if opcode == 0 {
            current?.message.frames += 1
        } else {
            var message = WebSocketMessage(direction: direction, opcode: opcode, captureLimit: captureLimit)
            message.compressed = rsv1
            current = DataMessage(message: message)
        }
        if !isControl, var data = current {
            // One mention per message, not one per fragment.
            for problem in problems where data.message.problem?.contains(problem) != true {
                data.message.problem = Self.joined(data.message.problem, problem)
            }
            current = data
        }
        if length == 0 {
            end(frame)
        } else {
            state = .payload(frame)
        }
    }

    /// Why a frame with this header cannot be read (the reader must stop), or nil.
    private func unreadable(opcode: UInt8, rsv1: Bool, rsv23: Bool, length: UInt64) -> String? {
        if length >> 63 != 0 { return "a frame length with its most significant bit set" }
        if WebSocketMessage.kind(of: opcode) == .reserved { return "a frame with the reserved opcode \(opcode)" }
        if rsv23 || (rsv1 && handshake.deflate == nil) {
            if !handshake.otherExtensions.isEmpty {
                return
                    "a frame using bits of the extension \(handshake.otherExtensions.joined(separator: ", ")), which the proxy does not read"
            }
            return rsv23
                ? "a frame with the reserved bits RSV2 or RSV3 set"
                : "a frame with RSV1 set although permessage-deflate was not agreed"
        }
        if rsv1 && (opcode == 0 || WebSocketMessage.isControl(opcode)) {
            return "RSV1 (compressed) set on a \(opcode == 0 ? "continuation" : "control") frame"
        }
        if opcode == 0 && current == nil { return "a continuation frame with no message to continue" }
        if (opcode == 1 || opcode == 2) && current != nil {
            return "a new data frame before the fragmented message's last frame"
        }
        return nil
    }

    /// Takes in a piece of a frame's payload; returns why reading must stop, or nil.
    private mutating func read(_ chunk: UnsafeRawBufferPointer, of frame: inout Frame) -> String? {
        if var control = frame.control {
            frame.control = nil
            control.wireSize += chunk.count
            unmasked(chunk, frame) { control.payload.append($0) }
            frame.control = control
            return nil
        }
        guard var data = current else { return nil }
        current = nil
        defer { current = data }
        data.message.wireSize += chunk.count
        let isText = data.message.opcode == 1
        if data.message.compressed {
            guard let inflater else { return "zlib could not start, so compressed frames cannot be read" }
            var failure: WebSocketInflater.Failure?
            unmasked(chunk, frame) { failure = Self.inflate($0, with: inflater, into: &data) }
            if let failure { return "compressed data that does not inflate (\(failure.reason))" }
            if data.message.payload.totalSize > Self.inflatedMessageLimit {
                return "a message inflating to more than \(Self.inflatedMessageLimit / (1024 * 1024)) MiB"
            }
        } else if isText || data.message.payload.hasRoom {
            unmasked(chunk, frame) { bytes in
                data.message.payload.append(bytes)
                if isText { data.utf8.feed(bytes) }
            }
        } else {
            data.message.payload.skip(chunk.count)
        }
        return nil
    }

    /// A frame's last payload byte arrived.
    private mutating func end(_ frame: Frame) {
        if let control = frame.control {
            output.append(finishedControl(control))
            return
        }
        guard frame.fin, var data = current else { return }
        current = nil
        if data.message.compressed, let inflater {
            // RFC 7692: the sender removed this empty stored block's tail from the end of each message.
            let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
            if let failure = tail.withUnsafeBytes({ Self.inflate($0, with: inflater, into: &data) }) {
                current = data
                stopInsideMessage("compressed data that does not inflate (\(failure.reason))")
                return
            }
            inflater.messageEnded(forgetWindow: forgetWindow)
        }
        if data.message.opcode == 1 && !data.utf8.isComplete {
            data.message.problem = Self.joined(data.message.problem, "a text message that is not valid UTF-8")
        }
        output.append(data.message)
    }

    private static func inflate(
        _ bytes: UnsafeRawBufferPointer, with inflater: WebSocketInflater,
        into data: inout DataMessage
    ) -> WebSocketInflater.Failure? {
        let isText = data.message.opcode == 1
        do {
            try inflater.inflate(bytes) { out in
                data.message.payload.append(out)
                if isText { data.utf8.feed(out) }
            }
            return nil
        } catch {
            return error
        }
    }

    private func finishedControl(_ control: WebSocketMessage) -> WebSocketMessage {
        var message = control
        if message.opcode == 8 {
            let bytes = message.payload.bytes
            if message.payload.totalSize == 1 {
                message.problem = Self.joined(
                    message.problem, "a close frame with a 1-byte payload (a status code takes 2)")
            } else if bytes.count >= 2 {
                let code = Int(bytes[0]) << 8 | Int(bytes[1])
                message.closeCode = code
                if !Self.isSendableCloseCode(code) {
                    message.problem = Self.joined(
                        message.problem, "the close code \(code), which may not be sent in a frame")
                }
                let reason = Array(bytes[2...])
                var utf8 = UTF8Validator()
                utf8.feed(reason)
                if !utf8.isComplete {
                    message.problem = Self.joined(message.problem, "a close reason that is not UTF-8")
                }
                message.closeReason = String(decoding: reason, as: UTF8.self)
            }
        }
        message.payload = message.payload.limited(to: captureLimit)
        return message
    }

    /// Codes an endpoint may put in a close frame (RFC 6455 7.4, and 1012-1014 from the IANA registry).
    static func isSendableCloseCode(_ code: Int) -> Bool {
        (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
    }

    // MARK: stopping

    private mutating func stop(_ reason: String, opcode: UInt8, wireSize: UInt64) {
        endPartial("cut short by an unreadable frame")
        var message = WebSocketMessage(direction: direction, opcode: opcode, captureLimit: 0)
        message.wireSize = Int(clamping: wireSize)
        message.problem = "\(reason); later frames in this direction are relayed unread"
        output.append(message)
        state = .stopped
    }

    /// The message being read cannot be read further: it is reported with `reason`, and reading stops.
    private mutating func stopInsideMessage(_ reason: String) {
        if var data = current {
            current = nil
            data.message.problem = Self.joined(
                data.message.problem, "\(reason); later frames in this direction are relayed unread")
            output.append(data.message)
        }
        state = .stopped
    }

    /// Reports a data message still waiting for frames as cut short.
    private mutating func endPartial(
        _ reason: String = "the connection ended before the fragmented message's last frame"
    ) {
        guard var data = current else { return }
        current = nil
        data.message.problem = Self.joined(data.message.problem, reason)
        output.append(data.message)
    }

    private mutating func takeOutput() -> [WebSocketMessage] {
        guard !output.isEmpty else { return [] }
        let messages = output
        output.removeAll(keepingCapacity: true)
        return messages
    }

    /// Hands `body` the chunk without its mask (frame bytes at offset `frame.consumed` onward), in pieces of at
    /// most `unmaskPiece` bytes, so that the reader's buffer stays small however large the reads are.
    private mutating func unmasked(
        _ chunk: UnsafeRawBufferPointer, _ frame: Frame, _ body: (UnsafeRawBufferPointer) -> Void
    ) {
        guard let mask = frame.mask else {
            body(chunk)
            return
        }
        var buffer = scratch
        scratch = []
        var position = Int(frame.consumed % 4)
        var start = 0
        while start < chunk.count {
            let end = min(chunk.count, start + Self.unmaskPiece)
            buffer.removeAll(keepingCapacity: true)
            for byte in chunk[start..<end] {
                buffer.append(byte ^ mask[position])
                position = (position + 1) & 3
            }
            buffer.withUnsafeBytes(body)
            start = end
        }
        scratch = buffer
    }

    static let unmaskPiece = 4096

    static func joined(_ first: String?, _ second: String) -> String {
        guard let first, !first.isEmpty else { return second }
        return "\(first); \(second)"
    }
}
