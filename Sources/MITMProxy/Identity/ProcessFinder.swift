import Foundation
import MITMCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Finds the process on this machine that owns a client's end of a TCP connection, from the system's socket tables
/// and `/proc/PID/fd` (Linux). Blocking file reads: run off the loops. Bounded: at most `linkLimit` descriptor links
/// are read per lookup.
enum ProcessFinder {
    static let linkLimit = 200_000
    private static let recentOwners = Mutex<[Int32]>([])

    /// The process whose socket has the local endpoint `address`:`port` (the client's side of a connection to the
    /// proxy). `treeRoot`: with a client command, the pid whose descendants belong to it. `socketTables`: where the
    /// socket tables of the client's network namespace are (this process's own by default).
    static func find(
        address: String, port: Int, remote: (address: String, port: Int)?, treeRoot: Int32?,
        socketTables: String = systemSocketTables
    ) -> Result<ClientProcess, ProcessUnknownReason> {
        guard let inode = socketInode(address: address, port: port, remote: remote, tables: socketTables) else {
            return .failure(.gone)
        }
        var denied = false
        var readLinks = 0
        // A client opens many connections from one process: the owners found last are asked first.
        for pid in recentOwners.withLock({ $0 }) where owns(pid: pid, inode: inode, readLinks: &readLinks) == true {
            return .success(describe(pid: pid, treeRoot: treeRoot))
        }
        guard let directory = opendir("/proc") else { return .failure(.notPermitted) }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = entryName(entry)
            guard let pid = Int32(name), pid != getpid() else { continue }
            switch owns(pid: pid, inode: inode, readLinks: &readLinks) {
            case .some(true):
                recentOwners.withLock { owners in
                    owners.removeAll { $0 == pid }
                    owners.insert(pid, at: 0)
                    if owners.count > 8 { owners.removeLast() }
                }
                return .success(describe(pid: pid, treeRoot: treeRoot))
            case .some(false):
                break
            case .none:
                denied = true
            }
            if readLinks >= linkLimit { return .failure(.timedOut) }
        }
        return .failure(denied ? .notPermitted : .gone)
    }

    /// The socket inode of the endpoint, from `/proc/net/tcp` and `/proc/net/tcp6` (an IPv4 client of a dual-stack
    /// listener appears in the second as an IPv4-mapped address).
    /// The socket tables of the proxy's own network namespace.
    static let systemSocketTables = "/proc/net"

    /// `remote`, the client's peer (the proxy's end of the connection, or where a redirected connection was going):
    /// one local port may carry several connections to different peers, of different processes.
    static func socketInode(address: String, port: Int, remote: (address: String, port: Int)?, tables: String)
        -> UInt64?
    {
        for (family, local) in endpoints(address: address, port: port) {
            guard let table = readWhole(tables + "/" + family) else { continue }
            let remoteEndpoint = remote.flatMap { remote in
                endpoints(address: remote.address, port: remote.port).first { $0.family == family }?.endpoint
            }
            if remote != nil && remoteEndpoint == nil { continue }
            if let inode = SocketTable.inode(in: table, local: local, remote: remoteEndpoint) { return inode }
        }
        return nil
    }

    /// `address`:`port` in the notation of the `tcp` table, and of the `tcp6` one (an IPv4 address as IPv4-mapped there).
    private static func endpoints(address: String, port: Int) -> [(family: String, endpoint: String)] {
        var endpoints: [(family: String, endpoint: String)] = []
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            let bytes = withUnsafeBytes(of: &v4) { Array($0) }
            if let endpoint = SocketTable.endpoint(address: bytes, port: port) { endpoints.append(("tcp", endpoint)) }
            if let mapped = SocketTable.endpoint(
                address: [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + bytes, port: port)
            {
                endpoints.append(("tcp6", mapped))
            }
        } else if inet_pton(AF_INET6, address, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            if let endpoint = SocketTable.endpoint(address: bytes, port: port) { endpoints.append(("tcp6", endpoint)) }
            if bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF],
                let endpoint = SocketTable.endpoint(address: Array(bytes.suffix(4)), port: port)
            {
                endpoints.append(("tcp", endpoint))
            }
        }
        return endpoints
    }

    /// The name of a directory entry. `d_name` is declared as 256 bytes, but an entry holds only its name and NUL:
    /// copying the declared array reads past the end of the last entry of `readdir`'s buffer (AddressSanitizer).
    private static func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        return String(cString: UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self))
    }

    /// Whether `pid` holds the socket; nil when its descriptors may not be read (another user's process).
    private static func owns(pid: Int32, inode: UInt64, readLinks: inout Int) -> Bool? {
        let path = "/proc/\(pid)/fd"
        guard let directory = opendir(path) else { return errno == EACCES ? nil : false }
        defer { closedir(directory) }
        var buffer = [CChar](repeating: 0, count: 64)
        while let entry = readdir(directory) {
            let name = entryName(entry)
            guard name.first?.isNumber == true else { continue }
            readLinks += 1
            let count = readlink(path + "/" + name, &buffer, buffer.count - 1)
            guard count > 0 else { continue }
            let link = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if SocketTable.socketInode(link: link) == inode { return true }
            if readLinks >= linkLimit { return false }
        }
        return false
    }

    private static func describe(pid: Int32, treeRoot: Int32?) -> ClientProcess {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"))
            ?? (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines)
            ?? "pid \(pid)"
        let arguments = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        let commandLine = String(decoding: arguments.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            .trimmingCharacters(in: .whitespaces)
        return ClientProcess(
            pid: pid, executable: executable, commandLine: String(commandLine.prefix(300)),
            inClientCommand: treeRoot.map { isDescendant(pid, of: $0) })
    }

    /// The whole text of a /proc file (their size reads as 0, and they come a page at a time), at most 64 MiB.
    private static func readWhole(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < 64 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `pid` descends from `root` (the chain of parents is at most 128 long; pid 1 ends it).
    static func isDescendant(_ pid: Int32, of root: Int32) -> Bool {
        var current = pid
        for _ in 0..<128 {
            guard let stat = readWhole("/proc/\(current)/stat"),
                let parent = SocketTable.parentPID(stat: stat)
            else { return false }
            if parent == root { return true }
            if parent <= 1 { return false }
            current = parent
        }
        return false
    }
}
