import FoundationEssentials
import Glibc

/// `flock(2)` locks that keep one CA per directory:
///
/// - `.create.lock`, held exclusively while a process checks for a CA and creates one, so that two proxies
///   started at once on an empty directory make one CA and the second loads it;
/// - `.in-use.lock`, held shared by every running proxy for its whole life, so that `ca regenerate` can
///   tell that a proxy still serves the current CA.
///
/// The kernel drops a process's locks when it exits, so a crashed proxy never leaves the directory locked.
public final class CADirectoryLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Waits for the creation lock of `directory` (which must exist).
    static func creation(in directory: String) throws(CertificateAuthorityError) -> CADirectoryLock {
        try lock(directory + "/.create.lock", operation: LOCK_EX, purpose: "creating the CA")
    }

    /// Marks `directory` as used by a running proxy until the returned lock is released.
    public static func inUse(directory: String) throws(CertificateAuthorityError) -> CADirectoryLock {
        let files = CertificateAuthorityFiles(directory: directory)
        return try lock(
            files.directory + "/.in-use.lock", operation: LOCK_SH, purpose: "marking the CA directory in use")
    }

    /// Whether a running proxy holds `directory` (a shared in-use lock that an exclusive one cannot take).
    public static func isHeldByAProxy(directory: String) -> Bool {
        let files = CertificateAuthorityFiles(directory: directory)
        let descriptor = open(files.directory + "/.in-use.lock", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) != 0 else {
            flock(descriptor, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    private static func lock(_ path: String, operation: Int32, purpose: String) throws(CertificateAuthorityError)
        -> CADirectoryLock
    {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            if code == EACCES || code == EPERM || code == EROFS {
                throw CertificateAuthorityError(
                    "the CA directory \(directory) is not writable by this user (\(String(cString: strerror(code)))): "
                        + "give it to this user (chown), or pass --ca-dir with a directory of your own")
            }
            throw CertificateAuthorityError(
                "cannot open the lock file \(path) (\(purpose)): \(String(cString: strerror(code)))")
        }
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                throw CertificateAuthorityError("cannot lock \(path) (\(purpose)): \(reason)")
            }
        }
        return CADirectoryLock(descriptor: descriptor)
    }
}
