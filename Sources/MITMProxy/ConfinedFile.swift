import Foundation

/// Where a rule's file really is, with every symbolic link resolved, and whether that is inside the directory the rule
/// lets clients read: the mapped directory (`--map-local PATTERN=DIR`), or the directory holding a single mapped file or
/// `bodyFile`. Any client allowed to use the proxy chooses the path under a mapped directory, so a link in it that leads
/// out (`passwd-link -> /etc/passwd`, a linked subdirectory) must not serve what it points at; a link that stays inside
/// still works.
enum ConfinedFile {
    /// Why a file is not served.
    enum Refusal: Error {
        /// Nothing is there (inside the directory).
        case missing
        /// The path leads out of the directory through a symbolic link.
        case outside
    }

    /// The real path of `path` if it lies inside the real path of `directory`.
    static func realPath(of path: String, inside directory: String) -> Result<String, Refusal> {
        guard let root = resolved(directory) else { return .failure(.missing) }
        if let real = resolved(path) { return contains(root, real) ? .success(real) : .failure(.outside) }
        // Nothing there: still `outside` when what does exist of the path leads out, so that a missing file behind a
        // link does not tell a client which names exist out there.
        var ancestor = parent(of: path)
        while ancestor.count > 1 {
            if let real = resolved(ancestor) { return .failure(contains(root, real) ? .missing : .outside) }
            ancestor = parent(of: ancestor)
        }
        return .failure(.missing)
    }

    /// The directory holding `path` (a single file's confinement).
    static func parent(of path: String) -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    private static func contains(_ root: String, _ path: String) -> Bool {
        path == root || path.hasPrefix(root == "/" ? "/" : root + "/")
    }
}
