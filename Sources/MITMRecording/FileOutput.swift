import Glibc

/// Whole-buffer writes to a descriptor for the record writers (`--events`, `--har`).
enum FileOutput {
    /// Writes all of `bytes`, again after interruptions and short writes; the reason (`strerror`) when it failed.
    static func write(_ bytes: [UInt8], to descriptor: Int32) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return written == 0 ? "nothing was written" : String(cString: strerror(errno)) }
            offset += written
        }
        return nil
    }
}
