import CMITMShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A nonblocking TCP connection with one deadline for every step, for one-shot CLI use.
///
/// Each wait goes through `poll` with the time left, so nothing here can hang past the deadline.
final class TCPClientSocket {
    private let fd: Int32
    /// `host:port` as the user named it, for messages; renamed once a proxy tunnel is open.
    var name: String
    private let deadline: Deadline

    private init(fd: Int32, name: String, deadline: Deadline) {
        self.fd = fd
        self.name = name
        self.deadline = deadline
    }

    deinit { close(fd) }

    /// Connects to `endpoint`, trying each resolved address in turn; `role` prefixes messages (`proxy `).
    static func connect(to endpoint: HostAndPort, role: String = "", deadline: Deadline) throws(PinsError)
        -> TCPClientSocket
    {
        let name = "\(role)\(endpoint)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocketType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard status == 0, let list else {
            throw PinsError("could not resolve \(role)\(endpoint.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let info = cursor {
            cursor = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = FileBytes.errnoText(errno)
                continue
            }
            let connection = TCPClientSocket(fd: fd, name: name, deadline: deadline)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            if systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return connection }
            guard errno == EINPROGRESS || errno == EINTR else {
                lastError = FileBytes.errnoText(errno)
                continue
            }
            guard try connection.wait(for: Int16(POLLOUT)) else {
                throw PinsError("could not connect to \(name): no answer within \(deadline.text)")
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == 0 { return connection }
            lastError = FileBytes.errnoText(code)
        }
        throw PinsError("could not connect to \(name): \(lastError)")
    }

    /// Sends every byte, or throws naming `stage` (`during the TLS handshake`).
    func sendAll(_ bytes: [UInt8], stage: String) throws(PinsError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignalFlag) }
            if count >= 0 {
                sent += count
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                guard try wait(for: Int16(POLLOUT)) else { throw timedOut(stage) }
            default: throw PinsError("\(name) broke the connection \(stage): \(FileBytes.errnoText(errno))")
            }
        }
    }

    /// Up to `limit` bytes; empty when the peer closed the connection.
    func receive(limit: Int = 16 * 1024, stage: String) throws(PinsError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return Array(buffer[0..<count]) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                guard try wait(for: Int16(POLLIN)) else { throw timedOut(stage) }
            default: throw PinsError("\(name) broke the connection \(stage): \(FileBytes.errnoText(errno))")
            }
        }
    }

    private func timedOut(_ stage: String) -> PinsError {
        PinsError("\(name) did not answer within \(deadline.text) \(stage)")
    }

    /// Waits until the socket is ready for `events`; false when the deadline passed.
    private func wait(for events: Int16) throws(PinsError) -> Bool {
        while true {
            let left = deadline.remainingMilliseconds
            guard left > 0 else { return false }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, left)
            if ready > 0 { return true }
            if ready == 0 { return false }
            guard errno == EINTR else { throw PinsError("waiting for \(name): \(FileBytes.errnoText(errno))") }
        }
    }
}

#if canImport(Glibc)
private let streamSocketType = mitm_sock_stream
private let noSignalFlag = Int32(MSG_NOSIGNAL)
#else
private let streamSocketType = SOCK_STREAM
private let noSignalFlag: Int32 = 0
#endif

// `connect` inside `TCPClientSocket.connect` would name the static method itself.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
