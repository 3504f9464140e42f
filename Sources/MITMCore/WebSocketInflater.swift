import CZlib

/// Inflates the raw DEFLATE stream of one direction of a `permessage-deflate` WebSocket (RFC 7692), for the
/// record only: the relayed bytes stay compressed. One instance per direction, because with context takeover
/// each message may refer back to the ones before it.
package final class WebSocketInflater {
    /// Why inflating failed.
    package struct Failure: Error, Sendable, Equatable {
        /// zlib's words.
        package let reason: String
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private var output = [UInt8](repeating: 0, count: 4096)
    private var ended = false

    /// A fresh inflater, or nil when zlib cannot allocate one.
    package init?() {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Window bits -15: raw DEFLATE (no zlib header), and the largest window, which also reads streams made
        // with a smaller one (`*_max_window_bits`).
        guard inflateInit2_(stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// A message ended. The window is forgotten when the sender compresses every message on its own
    /// (`forgetWindow`, from `*_no_context_takeover`) or ended its DEFLATE stream with a final block.
    package func messageEnded(forgetWindow: Bool) {
        guard forgetWindow || ended else { return }
        inflateReset(stream)
        ended = false
    }

    /// Inflates `input`, handing the output to `sink` piece by piece.
    package func inflate(_ input: UnsafeRawBufferPointer, into sink: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
        guard let base = input.baseAddress, !input.isEmpty, !ended else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        let capacity = output.count
        while true {
            let (status, produced) = output.withUnsafeMutableBytes { buffer -> (Int32, Int) in
                stream.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(capacity)
                let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                return (status, capacity - Int(stream.pointee.avail_out))
            }
            if produced > 0 { output.withUnsafeBytes { sink(UnsafeRawBufferPointer(rebasing: $0[..<produced])) } }
            switch status {
            case Z_OK:
                if stream.pointee.avail_in == 0 && produced < capacity { return }
            case Z_BUF_ERROR:
                return  // no progress possible: every input byte is used and the output is flushed
            case Z_STREAM_END:
                // A final block (BFINAL): the sender ended its stream; the rest of this message carries nothing.
                ended = true
                return
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw Failure(reason: message)
            }
        }
    }
}
