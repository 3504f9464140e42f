import Foundation

/// Recording files hold what the traffic held (cookies, tokens, passwords in forms), so only their owner may read
/// them: mode 0600, also when an existing file is overwritten.
enum PrivateFile {
    /// Opens `path` for writing, truncated, created 0600; an existing regular file is set to 0600 too (a terminal or
    /// pipe given as the path keeps its mode). Returns the descriptor, or -1 with `errno` set.
    static func openForWriting(_ path: String, exclusive: Bool = false) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (exclusive ? O_EXCL : 0), 0o600)
        guard descriptor >= 0 else { return -1 }
        var info = stat()
        if fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && fchmod(descriptor, 0o600) != 0 {
            let error = errno
            close(descriptor)
            errno = error
            return -1
        }
        return descriptor
    }

    /// Writes all of `bytes` to `descriptor`, retrying short writes and EINTR; false with `errno` set on failure.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Foundation.write(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}
