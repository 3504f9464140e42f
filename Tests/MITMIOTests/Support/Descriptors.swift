import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Raw descriptors for the tests: socket pairs and loopback TCP connections, set up with plain
/// blocking calls. The end handed to a `StreamSocket` is nonblocking; the test's end blocks.
enum Descriptors {
    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    /// A connected AF_UNIX stream pair: `(loopEnd, testEnd)`; only `loopEnd` is nonblocking.
    static func unixPair() throws -> (loopEnd: Int32, testEnd: Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SetupError(description: "socketpair: errno \(errno)")
        }
        setNonblocking(fds[0])
        return (fds[0], fds[1])
    }

    /// A connected loopback TCP pair: `(loopEnd, testEnd)`; only `loopEnd` is nonblocking.
    static func tcpPair() throws -> (loopEnd: Int32, testEnd: Int32) {
        let listener = try LoopbackListener()
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = loopback(port: listener.port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(client)
            throw SetupError(description: "connect to loopback: errno \(errno)")
        }
        let accepted = try listener.acceptOne()
        setNonblocking(accepted)
        return (accepted, client)
    }

    /// Writes all of `bytes` to a blocking descriptor.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Reads from a blocking descriptor until EOF, `limit` bytes, or 10 s without data; returns the count.
    static func drain(_ descriptor: Int32, limit: Int) -> Int {
        var patience = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var total = 0
        while total < limit {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            total += count
        }
        return total
    }

    static func setNonblocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }
}

/// A blocking loopback listener on a port the kernel picks (`listens: false` only binds it, so that
/// connects to it are refused while nobody else can take the port).
final class LoopbackListener {
    let descriptor: Int32
    let port: UInt16

    init(listens: Bool = true) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = Descriptors.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && (!listens || listen(descriptor, 16) == 0)
                    && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard ready else {
            close(descriptor)
            throw Descriptors.SetupError(description: "loopback listener: errno \(errno)")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Accepts one connection (blocking).
    func acceptOne() throws -> Int32 {
        let accepted = accept(descriptor, nil, nil)
        guard accepted >= 0 else { throw Descriptors.SetupError(description: "accept: errno \(errno)") }
        return accepted
    }

    deinit { close(descriptor) }
}

/// Runs blocking work on a thread of its own so it never ties up the Swift concurrency pool.
enum OwnThread {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }
}
