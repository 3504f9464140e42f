import FoundationEssentials
import Glibc

/// Small file operations with errno-accurate messages and explicit permissions.
enum FileStore {
    /// Reads a whole file, or explains why it could not.
    static func read(_ path: String, what: String) throws(CertificateAuthorityError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CertificateAuthorityError("cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw CertificateAuthorityError("cannot read \(what) \(path): \(String(cString: strerror(errno)))")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes `bytes` to `path` atomically (temporary file, fsync, rename) with `mode`.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws(CertificateAuthorityError) {
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw CertificateAuthorityError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw CertificateAuthorityError("cannot write \(path): \(reason)")
            }
            offset += written
        }
        fchmod(descriptor, mode)
        fsync(descriptor)
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CertificateAuthorityError("cannot write \(path): \(reason)")
        }
    }

    /// Whether something exists at `path` (file, directory or broken link).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// `mkdir -p` with mode 0700, naming the path component that stopped it and why.
    private static func makeDirectories(_ directory: String) throws(CertificateAuthorityError) {
        var path = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            path += "/" + component
            var info = stat()
            if stat(path, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw CertificateAuthorityError(
                        "cannot create CA directory \(directory): \(path) is a file, not a directory; pass another --ca-dir"
                    )
                }
                continue
            }
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw CertificateAuthorityError(
                    "cannot create CA directory \(directory): mkdir \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Creates `directory` (and parents) with mode 0700, or tightens an existing one to 0700.
    /// Returns a warning when an existing directory was readable by others.
    static func ensurePrivateDirectory(_ directory: String) throws(CertificateAuthorityError) -> String? {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw CertificateAuthorityError(
                    "CA directory \(directory) exists but is not a directory; pass another --ca-dir")
            }
            guard info.st_mode & 0o077 != 0 else { return nil }
            guard chmod(directory, 0o700) == 0 else {
                throw CertificateAuthorityError(
                    "CA directory \(directory) is accessible to other users and cannot be restricted to 0700: \(String(cString: strerror(errno)))"
                )
            }
            return "CA directory \(directory) was accessible to other users; restricted it to mode 0700"
        }
        try makeDirectories(directory)
        chmod(directory, 0o700)
        return nil
    }
}
