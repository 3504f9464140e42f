import Foundation

/// Reads whole files for the commands, with errors that name the file, the operation and the reason.
enum FileReading {
    /// The bytes of `path`, or a message like `cannot read report x.json: No such file or directory`.
    static func contents(of path: String, what: String) throws(FileReadingError) -> Data {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FileReadingError(what: what, path: path, reason: String(cString: strerror(errno)))
        }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw FileReadingError(what: what, path: path, reason: "it is a directory, not a file")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FileReadingError(what: what, path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var bytes = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileReadingError(what: what, path: path, reason: String(cString: strerror(errno)))
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

/// A file that could not be read.
struct FileReadingError: Error, CustomStringConvertible {
    let what: String
    let path: String
    let reason: String

    var description: String { "cannot read \(what) \(path): \(reason)" }
}
