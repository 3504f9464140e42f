import CMITMTLSShims
import COpenSSL

/// A transient OpenSSL memory BIO, used to move PEM/DER bytes in and out of OpenSSL objects.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// An empty, writable memory BIO.
    init() throws(TLSError) {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("allocating a memory BIO") }
        pointer = bio
    }

    /// A memory BIO holding a copy of `bytes`.
    convenience init(bytes: [UInt8]) throws(TLSError) {
        try self.init()
        let written = bytes.withUnsafeBytes { BIO_write(pointer, $0.baseAddress, Int32($0.count)) }
        if written != bytes.count && !bytes.isEmpty { throw TLSError("copying \(bytes.count) bytes into a memory BIO") }
    }

    /// Everything written into the BIO so far.
    var contents: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let length = mitm_bio_mem_contents(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    deinit { BIO_free(pointer) }
}

/// Calls an OpenSSL `i2d_*` function twice (size, then bytes) and returns the DER.
func derEncoded(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
    let length = encode(nil)
    guard length > 0 else { return nil }
    var bytes = [UInt8](repeating: 0, count: Int(length))
    let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
        return encode(&cursor)
    }
    return written == length ? bytes : nil
}
