/// Body bytes queued toward the peer on one stream, read by nghttp2's data provider as flow control allows.
final class HTTP2OutboundBody {
    private var chunks: [[UInt8]] = []
    private var firstChunk = 0
    private var firstOffset = 0
    /// Bytes queued and not yet handed to nghttp2.
    private(set) var buffered = 0
    /// No more bytes will be queued.
    var ended = false
    /// Trailer fields to send after the last byte, if any.
    var trailers: [HTTP2HeaderField]?

    func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        buffered += bytes.count
    }

    /// Copies up to `capacity` bytes into `destination` and drops them from the queue.
    func read(into destination: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        var copied = 0
        while copied < capacity && firstChunk < chunks.count {
            let chunk = chunks[firstChunk]
            let count = min(capacity - copied, chunk.count - firstOffset)
            chunk.withUnsafeBufferPointer { source in
                (destination + copied).update(from: source.baseAddress! + firstOffset, count: count)
            }
            copied += count
            firstOffset += count
            if firstOffset == chunk.count {
                firstChunk += 1
                firstOffset = 0
            }
        }
        buffered -= copied
        if firstChunk == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            firstChunk = 0
        } else if firstChunk > 64 {
            chunks.removeFirst(firstChunk)
            firstChunk = 0
        }
        return copied
    }
}
