import CMITMShims
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: Sendable, CustomStringConvertible {
    private var storage: sockaddr_storage
    /// The byte length of the address structure.
    public let length: socklen_t

    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// The address family (`AF_INET` or `AF_INET6`).
    public var family: Int32 { Int32(storage.ss_family) }

    /// The port.
    public var port: Int {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// The IP address as text (`127.0.0.1`, `::1`).
    public var host: String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafePointer(to: &copy) { pointer in
            if family == AF_INET {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var inet = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &inet, &buffer, socklen_t(buffer.count))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var inet = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &inet, &buffer, socklen_t(buffer.count))
                }
            }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `host:port`, with IPv6 hosts bracketed.
    public var description: String {
        Self.describe(host: host, port: port, family: family)
    }

    /// `host:port` for an address whose host text is already made.
    static func describe(host: String, port: Int, family: Int32) -> String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    public func withSockAddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// A numeric address (IP literal, no lookup), or nil when `host` is not one.
    public static func numeric(host: String, port: Int) -> SocketAddress? {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = mitm_sock_stream
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let result else { return nil }
        defer { freeaddrinfo(result) }
        return SocketAddress(copying: result.pointee)
    }

    init?(copying info: addrinfo) {
        guard let address = info.ai_addr, info.ai_family == AF_INET || info.ai_family == AF_INET6 else { return nil }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen)))
        }
        self.init(storage: storage, length: info.ai_addrlen)
    }

    /// Reads the local address of a socket.
    static func local(of descriptor: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage: storage, length: length) : nil
    }
}

extension SocketAddress {
    /// Reads the remote address of a connected socket.
    public static func peer(of descriptor: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage: storage, length: length) : nil
    }
}
