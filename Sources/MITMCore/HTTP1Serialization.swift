extension HTTPRequestHead {
    /// The head on the wire: `METHOD target HTTP/x.y\r\n`, each field as `name: value\r\n` in order, then `\r\n`.
    public func serialized() -> [UInt8] {
        HTTP1Serialization.head(startLine: (method, target, version.description), headers: headers)
    }

    /// `serialized().count`, without writing the bytes (a HAR entry's `headersSize`).
    public var serializedCount: Int {
        HTTP1Serialization.headCount(startLine: (method, target, version.description), headers: headers)
    }

    /// This head, made from `parsed` to be sent on: the bytes `parsed` was read from when this head says what they
    /// say (nothing was added, removed or changed on the way), else `serialized()`.
    package func bytes(forwarding parsed: HTTPRequestHead) -> [UInt8] {
        if let received = parsed.parsedFrom, self == parsed { return received }
        return serialized()
    }
}

extension HTTPResponseHead {
    /// The head on the wire: `HTTP/x.y status reason\r\n` (the space before an empty reason is kept, as RFC 9112
    /// requires), each field as `name: value\r\n` in order, then `\r\n`.
    public func serialized() -> [UInt8] {
        HTTP1Serialization.head(startLine: (version.description, String(status), reason), headers: headers)
    }

    /// `serialized().count`, without writing the bytes (a HAR entry's `headersSize`).
    public var serializedCount: Int {
        HTTP1Serialization.headCount(startLine: (version.description, String(status), reason), headers: headers)
    }

    /// This head, made from `parsed` to be sent on: the bytes `parsed` was read from when this head says what they
    /// say (nothing was added, removed or changed on the way), else `serialized()`.
    package func bytes(forwarding parsed: HTTPResponseHead) -> [UInt8] {
        if let received = parsed.parsedFrom, self == parsed { return received }
        return serialized()
    }
}

/// Writing header blocks.
enum HTTP1Serialization {
    /// A head: the start line's three parts separated by spaces, CRLF, then the field block.
    static func head(startLine parts: (String, String, String), headers: HTTPHeaders) -> [UInt8] {
        write(headCount(startLine: parts, headers: headers)) { writer in
            writer.append(parts.0)
            writer.append(HTTPSyntax.space)
            writer.append(parts.1)
            writer.append(HTTPSyntax.space)
            writer.append(parts.2)
            writer.appendLineEnd()
            writer.append(headers)
        }
    }

    /// The bytes of a head: the start line and the field block.
    static func headCount(startLine parts: (String, String, String), headers: HTTPHeaders) -> Int {
        parts.0.utf8.count + parts.1.utf8.count + parts.2.utf8.count + 4 + fieldBytes(headers)
    }

    /// The bytes of a field block: every field as `name: value\r\n`, and the blank line that ends the block.
    static func fieldBytes(_ headers: HTTPHeaders) -> Int {
        var count = 2
        for index in headers.fields.indices {
            let valueCount = headers.fields[index].receivedValueBytes?.count ?? headers.fields[index].value.utf8.count
            count += headers.fields[index].name.utf8.count + valueCount + 4
        }
        return count
    }

    /// At most `size` bytes, written in place by `body`: one allocation and a copy per piece, where appending to an
    /// array checks its capacity and uniqueness for every piece (a head is written for every message).
    static func write(_ size: Int, _ body: (inout HeadWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var writer = HeadWriter(buffer: buffer)
            body(&writer)
            count = writer.count
        }
    }

    /// Copies the pieces of a head into memory sized for it.
    struct HeadWriter {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        private(set) var count = 0

        init(buffer: UnsafeMutableBufferPointer<UInt8>) {
            self.buffer = buffer
        }

        mutating func append(_ byte: UInt8) {
            precondition(count < buffer.count, "a head is longer than worked out")
            buffer[count] = byte
            count += 1
        }

        mutating func appendLineEnd() {
            append(HTTPSyntax.cr)
            append(HTTPSyntax.lf)
        }

        mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
            precondition(count + bytes.count <= buffer.count, "a head is longer than worked out")
            (buffer.baseAddress! + count).initialize(from: source, count: bytes.count)
            count += bytes.count
        }

        mutating func append(_ text: String) {
            let copied: Void? = text.utf8.withContiguousStorageIfAvailable { append($0) }
            if copied == nil { for byte in text.utf8 { append(byte) } }
        }

        mutating func append(_ headers: HTTPHeaders) {
            for index in headers.fields.indices {
                append(headers.fields[index].name)
                append(HTTPSyntax.colon)
                append(HTTPSyntax.space)
                if let received = headers.fields[index].receivedValueBytes {
                    received.withUnsafeBufferPointer { append($0) }
                } else {
                    append(headers.fields[index].value)
                }
                appendLineEnd()
            }
            appendLineEnd()
        }
    }
}

/// Writing bodies with the chunked transfer coding (RFC 9112 §7.1).
public enum HTTP1Chunked {
    /// One chunk: the size in lowercase hex, CRLF, the data, CRLF. Empty data gives no bytes at all, so a writer can
    /// never end the body by accident; use `lastChunk(trailers:)` for that.
    public static func encodeChunk(_ data: [UInt8]) -> [UInt8] {
        encodeChunk(data[...])
    }

    /// One chunk of `data`; empty data gives no bytes.
    public static func encodeChunk(_ data: ArraySlice<UInt8>) -> [UInt8] {
        guard !data.isEmpty else { return [] }
        let size = String(data.count, radix: 16)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size.utf8.count + data.count + 4)
        bytes.append(contentsOf: size.utf8)
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
        bytes.append(contentsOf: data)
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
        return bytes
    }

    /// The end of a chunked body: `0\r\n`, the trailer fields if any, and the final `\r\n`.
    public static func lastChunk(trailers: HTTPHeaders?) -> [UInt8] {
        let trailers = trailers ?? HTTPHeaders()
        return HTTP1Serialization.write(3 + HTTP1Serialization.fieldBytes(trailers)) { writer in
            writer.append(UInt8(ascii: "0"))
            writer.appendLineEnd()
            writer.append(trailers)
        }
    }
}
