/// Reads Linux's socket tables (`/proc/net/tcp`, `/proc/net/tcp6`) to find the socket of one endpoint: the first
/// step of telling which process on this machine owns a client connection. Sans-io: text in, inode out.
package enum SocketTable {
    /// An endpoint in the tables' notation: the address as the kernel's 32-bit words in hex (host byte order,
    /// little-endian here), a colon, the port in hex: `0100007F:1F90` is 127.0.0.1:8080.
    package static func endpoint(address: [UInt8], port: Int) -> String? {
        guard address.count == 4 || address.count == 16, (0...65_535).contains(port) else { return nil }
        var text = ""
        for word in stride(from: 0, to: address.count, by: 4) {
            text += DigitText.hex(address[word..<word + 4].reversed(), uppercase: true)
        }
        return text + ":" + DigitText.hex([UInt8(port >> 8), UInt8(port & 0xFF)], uppercase: true)
    }

    /// The inode of the socket whose local endpoint is `local` (and, when given, whose remote endpoint is `remote`),
    /// or nil when the table has none (or only entries with inode 0: closing sockets no process owns).
    package static func inode(in table: String, local: String, remote: String? = nil) -> UInt64? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
            guard fields.count >= 10, fields[1] == local, remote.map({ fields[2] == $0 }) ?? true,
                let inode = UInt64(fields[9]), inode != 0
            else { continue }
            return inode
        }
        return nil
    }

    /// The inode a `/proc/PID/fd/N` link names when it is a socket (`socket:[12345]`).
    package static func socketInode(link: String) -> UInt64? {
        guard link.hasPrefix("socket:["), link.hasSuffix("]") else { return nil }
        return UInt64(link.dropFirst(8).dropLast())
    }

    /// The parent pid in the text of `/proc/PID/stat` (`pid (comm) state ppid ...`; the name may hold spaces and
    /// parentheses, so the fields are counted from the last `)`).
    package static func parentPID(stat: String) -> Int32? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count >= 2 ? Int32(fields[1]) : nil
    }
}
