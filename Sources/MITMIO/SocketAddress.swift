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
        return withUnsafePointer(to: &copy) { pointer in
            if family == AF_INET {
                let address = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    $0.pointee.sin_addr.s_addr
                }
                return Self.dottedQuad(UInt32(bigEndian: address))
            }
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                var inet = address.pointee.sin6_addr
                return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { buffer in
                    guard inet_ntop(AF_INET6, &inet, buffer.baseAddress, socklen_t(buffer.count)) != nil else {
                        return ""
                    }
                    return String(cString: buffer.baseAddress!)
                }
            }
        }
    }

    /// `a.b.c.d` for an IPv4 address in host byte order: written by hand, since every accepted connection asks and
    /// glibc's `inet_ntop` formats through `sprintf`.
    static func dottedQuad(_ address: UInt32) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { buffer in
            var count = 0
            for shift in stride(from: 24, through: 0, by: -8) {
                let octet = Int((address >> UInt32(shift)) & 0xFF)
                if octet >= 100 {
                    buffer[count] = UInt8(ascii: "0") + UInt8(octet / 100)
                    count += 1
                }
                if octet >= 10 {
                    buffer[count] = UInt8(ascii: "0") + UInt8(octet / 10 % 10)
                    count += 1
                }
                buffer[count] = UInt8(ascii: "0") + UInt8(octet % 10)
                count += 1
                if shift > 0 {
                    buffer[count] = UInt8(ascii: ".")
                    count += 1
                }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
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
    public static func local(of descriptor: Int32) -> SocketAddress? {
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
