extension HTTPRequestHead {
    /// The head on the wire: `METHOD target HTTP/x.y\r\n`, each field as `name: value\r\n` in order, then `\r\n`.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + HTTP1Serialization.fieldBytes(headers))
        HTTP1Serialization.appendUTF8(method, to: &bytes)
        bytes.append(HTTPSyntax.space)
        HTTP1Serialization.appendUTF8(target, to: &bytes)
        bytes.append(HTTPSyntax.space)
        bytes.append(contentsOf: version.description.utf8)
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
        HTTP1Serialization.appendFields(headers, to: &bytes)
        return bytes
    }
}

extension HTTPResponseHead {
    /// The head on the wire: `HTTP/x.y status reason\r\n` (the space before an empty reason is kept, as RFC 9112
    /// requires), each field as `name: value\r\n` in order, then `\r\n`.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + HTTP1Serialization.fieldBytes(headers))
        bytes.append(contentsOf: version.description.utf8)
        bytes.append(HTTPSyntax.space)
        HTTP1Serialization.appendDecimal(status, to: &bytes)
        bytes.append(HTTPSyntax.space)
        HTTP1Serialization.appendUTF8(reason, to: &bytes)
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
        HTTP1Serialization.appendFields(headers, to: &bytes)
        return bytes
    }
}

/// Writing header blocks.
enum HTTP1Serialization {
    /// The bytes `appendFields` writes, but the final blank line.
    static func fieldBytes(_ headers: HTTPHeaders) -> Int {
        var count = 0
        for index in headers.fields.indices { count += headers.fields[index].name.utf8.count + headers.fields[index].value.utf8.count + 4 }
        return count
    }

    /// Appends the UTF-8 of `text` as one copy from its contiguous storage (appending a `UTF8View` goes element by
    /// element: about 180 instructions a field).
    static func appendUTF8(_ text: String, to bytes: inout [UInt8]) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: text.utf8) }
    }

    /// Appends `value` (not negative) in decimal digits.
    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &bytes) }
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Appends every field as `name: value\r\n`, then the blank line that ends the block.
    static func appendFields(_ headers: HTTPHeaders, to bytes: inout [UInt8]) {
        for index in headers.fields.indices {
            appendUTF8(headers.fields[index].name, to: &bytes)
            bytes.append(HTTPSyntax.colon)
            bytes.append(HTTPSyntax.space)
            if let received = headers.fields[index].receivedValueBytes {
                bytes.append(contentsOf: received)
            } else {
                appendUTF8(headers.fields[index].value, to: &bytes)
            }
            bytes.append(HTTPSyntax.cr)
            bytes.append(HTTPSyntax.lf)
        }
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
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
        var bytes: [UInt8] = [UInt8(ascii: "0"), HTTPSyntax.cr, HTTPSyntax.lf]
        HTTP1Serialization.appendFields(trailers ?? HTTPHeaders(), to: &bytes)
        return bytes
    }
}
