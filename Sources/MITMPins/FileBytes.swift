#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads with errors that name the file and the reason.
enum FileBytes {
    /// The bytes of `path`; `what` names the kind of file in messages (`certificate file`). A file longer than
    /// `limit` bytes is refused once that much is read (it may be endless, like `/dev/zero`).
    static func read(_ path: String, what: String, limit: Int = .max) throws(PinsError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PinsError("cannot read \(what) \(path): \(errnoText(errno))") }
        defer { close(fd) }
        var status = stat()
        if fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            throw PinsError("cannot read \(what) \(path): it is a directory")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw PinsError("cannot read \(what) \(path): \(errnoText(errno))")
            }
            bytes += chunk[0..<count]
            if bytes.count > limit {
                throw PinsError(
                    "cannot read \(what) \(path): it is larger than \(limit / 1024 / 1024) MiB, which no \(what) is")
            }
        }
    }

    /// The C library's text for `code`, starting lowercase to sit inside a sentence.
    static func errnoText(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

// `read` inside `FileBytes.read` would name the static method itself.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
