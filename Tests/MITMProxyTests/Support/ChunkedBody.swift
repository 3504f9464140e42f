/// Decodes an HTTP/1.1 chunked body as received on the wire, so tests can check framing and trailers themselves.
struct ChunkedBody {
    /// Why the bytes are not a chunked body.
    struct Malformed: Error, CustomStringConvertible {
        /// What is wrong.
        let description: String
    }

    /// The body with the chunk framing removed.
    var body: [UInt8]
    /// Trailer fields as sent, in order.
    var trailers: [(name: String, value: String)]

    /// Decodes `raw`, which must be exactly one chunked body: chunks, the last chunk, trailers and the final CRLF.
    init(decoding raw: ArraySlice<UInt8>) throws {
        body = []
        trailers = []
        var rest = raw
        while true {
            let sizeLine = try Self.takeLine(&rest)
            let sizeText = sizeLine.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingWhitespace, radix: 16), size >= 0 else {
                throw Malformed(description: "bad chunk size line \(sizeLine.debugDescription)")
            }
            if size == 0 { break }
            guard rest.count >= size + 2 else { throw Malformed(description: "chunk of \(size) bytes is cut short") }
            body += rest.prefix(size)
            rest = rest.dropFirst(size)
            guard try Self.takeLine(&rest).isEmpty else {
                throw Malformed(description: "chunk data not followed by CRLF")
            }
        }
        while true {
            let line = try Self.takeLine(&rest)
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "bad trailer \(line)") }
            trailers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingWhitespace))
        }
        guard rest.isEmpty else { throw Malformed(description: "\(rest.count) bytes after the chunked body") }
    }

    /// The value of the first trailer named `name`, compared case-insensitively.
    func trailer(_ name: String) -> String? {
        trailers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    private static func takeLine(_ bytes: inout ArraySlice<UInt8>) throws -> String {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")),
            newline > bytes.startIndex, bytes[newline - 1] == UInt8(ascii: "\r")
        else {
            throw Malformed(description: "missing CRLF in chunked body")
        }
        let line = String(decoding: bytes[..<(newline - 1)], as: UTF8.self)
        bytes = bytes[(newline + 1)...]
        return line
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingWhitespace: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
