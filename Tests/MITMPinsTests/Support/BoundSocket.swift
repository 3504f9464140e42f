import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to a kernel-picked port on 127.0.0.1 and kept open for the test.
///
/// Not listening, connections to it are refused at once; listening but never accepting, the
/// kernel completes the TCP handshake and the peer then waits forever for data.
final class BoundSocket: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is only closed in deinit.
    let port: Int
    private let fd: Int32

    init(listening: Bool) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw TestFailure("bind failed")
        }
        if listening {
            guard listen(fd, 4) == 0 else {
                close(fd)
                throw TestFailure("listen failed")
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
