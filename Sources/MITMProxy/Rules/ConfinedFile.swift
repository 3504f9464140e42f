import CMITMShims
import Foundation

/// Opens a rule's file beneath the directory the rule lets clients read: the mapped directory (`--map-local
/// PATTERN=DIR`), or the directory holding a single mapped file or `bodyFile`. Any client allowed to use the proxy
/// chooses the path under a mapped directory, so a link in it that leads out (`passwd-link -> /etc/passwd`, a linked
/// subdirectory) must not serve what it points at, not even when the link is put in place while the file is opened: the
/// kernel checks the whole lookup as it opens (`openat2` with `RESOLVE_BENEATH`). A link that stays inside still works;
/// where `openat2` is missing, no link is followed at all.
enum ConfinedFile {
    /// Why a file is not served.
    enum Refusal: Error {
        /// Nothing is there (inside the directory).
        case missing
        /// The path leads out of the directory through a symbolic link.
        case outside
        /// It is there but cannot be opened (permissions, too many open files): the system's words.
        case unopenable(String)
    }

    /// A descriptor for reading `path` (inside `directory`, as `LocalFilePath` makes it) that the caller closes.
    /// `componentWise` takes the fallback that opens one component at a time even where `openat2` exists.
    static func open(_ path: String, beneath directory: String, componentWise: Bool = false) -> Result<Int32, Refusal> {
        let root = Foundation.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else {
            return .failure(errno == ENOENT || errno == ENOTDIR ? .missing : .unopenable(systemText()))
        }
        defer { close(root) }
        // Nonblocking so that a FIFO put there cannot hold the loop; the caller serves regular files only.
        let descriptor = mitm_open_beneath(
            root, relative(path, to: directory), O_RDONLY | O_NONBLOCK, componentWise ? 1 : 0)
        guard descriptor < 0 else { return .success(descriptor) }
        switch errno {
        case EXDEV, ELOOP: return .failure(.outside)
        case ENOENT, ENOTDIR: return .failure(.missing)
        default: return .failure(.unopenable(systemText()))
        }
    }

    /// The directory holding `path` (a single file's confinement).
    static func parent(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// `path` below `directory`, without the directory (the last name when `directory` is the parent of a bare name).
    static func relative(_ path: String, to directory: String) -> String {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        if path.hasPrefix(base) { return String(path.dropFirst(base.count)) }
        return path.split(separator: "/").last.map(String.init) ?? path
    }

    private static func systemText() -> String { String(cString: strerror(errno)) }
}
