import CZlib

@testable import MITMCore

/// Builds WebSocket frames the way endpoints write them (RFC 6455, RFC 7692) for the reader's tests.
enum WebSocketFrames {
    static let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    /// One frame: `masked` as a client sends it, with the shortest length encoding (or `length127`).
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool, rsv1: Bool = false,
        rsv: UInt8 = 0, length127: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | rsv | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 && !length127 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF && !length127 {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    static func text(_ text: String, masked: Bool) -> [UInt8] { frame(1, Array(text.utf8), masked: masked) }

    /// A close frame with `code` and `reason`.
    static func close(_ code: Int, _ reason: String, masked: Bool) -> [UInt8] {
        frame(8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8), masked: masked)
    }
}

/// A raw DEFLATE compressor as a `permessage-deflate` sender uses it: each message flushed with
/// Z_SYNC_FLUSH and its 00 00 FF FF tail removed; the window kept between messages unless told otherwise.
final class WebSocketDeflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

    init() {
        stream.initialize(to: z_stream())
        precondition(
            deflateInit2_(
                stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    func compress(_ message: [UInt8], forgetWindow: Bool = false) -> [UInt8] {
        var input = message
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        input.withUnsafeMutableBytes { inputBytes in
            stream.pointee.next_in = inputBytes.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_in = uInt(inputBytes.count)
            repeat {
                let produced = buffer.withUnsafeMutableBytes { out -> Int in
                    stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(out.count)
                    _ = deflate(stream, Z_SYNC_FLUSH)
                    return out.count - Int(stream.pointee.avail_out)
                }
                output += buffer[..<produced]
            } while stream.pointee.avail_out == 0
        }
        if forgetWindow { deflateReset(stream) }
        precondition(output.suffix(4) == [0, 0, 0xFF, 0xFF])
        return Array(output.dropLast(4))
    }
}
