import CZlib

/// Undoes `Content-Encoding: gzip` or `deflate` on a kept body, for searching it: as much as the bytes give (a
/// truncated body inflates to its beginning), at most `outputLimit` bytes.
enum BodyInflater {
    static let outputLimit = 16 * 1024 * 1024

    /// The inflated bytes, or nil when `bytes` are neither gzip nor zlib nor raw DEFLATE.
    static func inflate(_ bytes: [UInt8]) -> [UInt8]? {
        // 15 + 32: gzip or zlib, told apart by the header; -15: raw DEFLATE, which some servers send as `deflate`.
        inflate(bytes, windowBits: 15 + 32) ?? inflate(bytes, windowBits: -15)
    }

    private static func inflate(_ bytes: [UInt8], windowBits: Int32) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return nil
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = bytes
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            var result = Z_OK
            while result == Z_OK, output.count < outputLimit {
                result = chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if result == Z_BUF_ERROR { break }  // the kept bytes ended before the stream did
            }
            return result
        }
        guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && !output.isEmpty) else { return nil }
        return Array(output.prefix(outputLimit))
    }
}
