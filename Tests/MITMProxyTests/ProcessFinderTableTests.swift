import Foundation
import Testing

@testable import MITMProxy

/// Finding a client's socket in the kernel's tables: one local port can carry connections of different processes to
/// different peers (Linux reuses an ephemeral port for another destination), so the peer must match too.
@Suite struct ProcessFinderTableTests {
    /// `127.0.0.1:40000` twice: to a python origin at `127.0.0.1:8443` (inode 111) and to the proxy at `127.0.0.1:8888` (222).
    private static let table = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:9C40 0100007F:20FB 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0 20 4 30 10 -1
           1: 0100007F:9C40 0100007F:22B8 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1

        """

    @Test func theSocketIsTheOneWhosePeerIsTheProxy() throws {
        let directory = try TemporaryDirectory.make("socket-tables")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.table.write(toFile: directory + "/tcp", atomically: true, encoding: .utf8)
        #expect(
            ProcessFinder.socketInode(address: "127.0.0.1", port: 40000, remote: ("127.0.0.1", 8888), tables: directory)
                == 222)
        #expect(
            ProcessFinder.socketInode(address: "127.0.0.1", port: 40000, remote: ("127.0.0.1", 8443), tables: directory)
                == 111)
        #expect(
            ProcessFinder.socketInode(address: "127.0.0.1", port: 40000, remote: ("127.0.0.1", 9999), tables: directory)
                == nil,
            "a connection to another peer is not this client's")
    }
}
