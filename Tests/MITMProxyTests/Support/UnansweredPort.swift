import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that never answers: a listener that never accepts. With its queue filled (backlog 0)
/// the kernel drops further SYNs and a connect waits until it gives up; with room in the queue connects
/// succeed and then hear nothing. Closes everything on deinit.
final class UnansweredPort: @unchecked Sendable {
    /// The listening port.
    let port: UInt16
    private var descriptors: [Int32] = []

    /// `acceptsConnections`: leave room in the accept queue, so connects succeed and then nothing is ever
    /// said (a server that hangs after the TCP handshake); otherwise fill it, so connects themselves hang.
    init(acceptsConnections: Bool = false) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Bool in
                bind(listener, raw, length) == 0 && listen(listener, acceptsConnections ? 64 : 0) == 0
                    && getsockname(listener, raw, &length) == 0
            }
        }
        descriptors.append(listener)
        guard bound else { throw SubprocessError(description: "cannot set up a listener: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        // Fill the accept queue; once full, further connects get no SYN-ACK.
        for _ in 0..<(acceptsConnections ? 0 : 4) {
            let filler = socket(
                AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            descriptors.append(filler)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
            }
        }
    }

    deinit { descriptors.forEach { close($0) } }
}

/// A loopback port that refuses connections: bound but not listening, so a connect gets a reset, and held
/// until deinit so no other test can take it meanwhile.
final class RefusingPort: @unchecked Sendable {
    /// The bound port.
    let port: UInt16
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw SubprocessError(description: "cannot bind a loopback port")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
