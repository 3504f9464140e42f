import CMITMTLSShims
import COpenSSL

/// The ciphertext between one `SSL` and its socket, behind a BIO of our own instead of two memory BIOs.
///
/// Input is read by OpenSSL straight out of the caller's buffer while it is lent (`lend(_:during:)`); only what
/// OpenSSL leaves unread is copied, into `kept`. Output records are appended to `output`, which the socket takes
/// whole. A memory BIO copied every byte in and out once more and zeroed its buffer each time it grew again.
final class CiphertextBuffers {
    private var lent: UnsafeRawBufferPointer?
    private var lentOffset = 0
    private var kept: [UInt8] = []
    private var keptOffset = 0
    /// Records written by OpenSSL and not yet taken.
    private(set) var output: [UInt8] = []
    /// Sends records on at once when nothing waits before them; returns how many bytes it took.
    var directOutput: ((UnsafeRawBufferPointer) -> Int)?

    /// A new BIO reading from and writing to these buffers. The BIO does not retain them: keep them alive
    /// until the `SSL` that owns the BIO is freed.
    func makeBIO() -> OpaquePointer? {
        guard let method = ciphertextMethod, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        return bio
    }

    /// Ciphertext received and not yet read by OpenSSL.
    var inputCount: Int {
        kept.count - keptOffset + (lent.map { $0.count - lentOffset } ?? 0)
    }

    /// Copies `bytes` behind the input already waiting.
    func keep(_ bytes: UnsafeRawBufferPointer) {
        keepLent()
        kept.append(contentsOf: bytes)
    }

    /// Lets OpenSSL read `bytes` in place while `body` runs; what it leaves unread is then kept.
    func lend<R>(_ bytes: UnsafeRawBufferPointer, during body: () -> R) -> R {
        guard lent == nil else {
            keep(bytes)
            return body()
        }
        lent = bytes
        lentOffset = 0
        defer { keepLent() }
        return body()
    }

    private func keepLent() {
        guard let bytes = lent else { return }
        lent = nil
        if lentOffset < bytes.count { kept.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[lentOffset...])) }
    }

    /// Takes the records waiting to be sent.
    func takeOutput() -> [UInt8] {
        let taken = output
        output = []
        return taken
    }

    /// Hands the records waiting to `send`, which returns how many bytes it took; keeps the rest.
    func sendOutput(_ send: (UnsafeRawBufferPointer) -> Int) {
        let sent = output.withUnsafeBytes(send)
        if sent >= output.count {
            output = []
        } else if sent > 0 {
            output.removeFirst(sent)
        }
    }

    /// Drops the capacity of buffers that are empty (an idle connection keeps none).
    func compact() {
        if keptOffset == kept.count {
            kept = []
            keptOffset = 0
        }
        if output.isEmpty { output = [] }
    }

    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var filled = 0
        if keptOffset < kept.count {
            let count = min(buffer.count, kept.count - keptOffset)
            kept.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + keptOffset, byteCount: count)
            }
            keptOffset += count
            filled = count
            if keptOffset == kept.count {
                kept.removeAll(keepingCapacity: true)
                keptOffset = 0
            }
        }
        if filled < buffer.count, let source = lent, lentOffset < source.count {
            let count = min(buffer.count - filled, source.count - lentOffset)
            (buffer.baseAddress! + filled).copyMemory(from: source.baseAddress! + lentOffset, byteCount: count)
            lentOffset += count
            filled += count
        }
        return filled
    }

    fileprivate func write(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        if output.isEmpty, let directOutput {
            rest = UnsafeRawBufferPointer(rebasing: bytes[directOutput(bytes)...])
        }
        if !rest.isEmpty { output.append(contentsOf: rest) }
    }

    /// Runs `body` with the buffers of `bio` (kept alive by their connection meanwhile: no retain per call).
    fileprivate static func with<R>(_ bio: OpaquePointer?, _ body: (CiphertextBuffers) -> R) -> R? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<CiphertextBuffers>.fromOpaque(data)._withUnsafeGuaranteedRef(body)
    }
}

/// The BIO_METHOD, made once for the process.
private nonisolated(unsafe) let ciphertextMethod: OpaquePointer? = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "mitm-proxy ciphertext") else {
        return nil
    }
    BIO_meth_set_read_ex(method) { bio, data, length, readCount in
        mitm_bio_clear_retry_flags(bio)
        guard let data, length > 0,
            let count = CiphertextBuffers.with(
                bio, { $0.read(into: UnsafeMutableRawBufferPointer(start: data, count: length)) })
        else { return 0 }
        readCount?.pointee = count
        if count == 0 {
            mitm_bio_set_retry_read(bio)
            return 0
        }
        return 1
    }
    BIO_meth_set_write_ex(method) { bio, data, length, writtenCount in
        mitm_bio_clear_retry_flags(bio)
        guard let data,
            CiphertextBuffers.with(bio, { $0.write(UnsafeRawBufferPointer(start: data, count: length)) }) != nil
        else {
            return 0
        }
        writtenCount?.pointee = length
        return 1
    }
    BIO_meth_set_ctrl(method) { bio, command, _, _ in
        switch command {
        case BIO_CTRL_FLUSH: return 1
        case BIO_CTRL_PENDING: return CiphertextBuffers.with(bio) { $0.inputCount } ?? 0
        case BIO_CTRL_WPENDING: return CiphertextBuffers.with(bio) { $0.output.count } ?? 0
        default: return 0
        }
    }
    return method
}()
