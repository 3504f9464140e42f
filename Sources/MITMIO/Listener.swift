import Dispatch
import CMITMShims
#if canImport(Glibc)
import Glibc
#endif

/// Why the proxy could not listen.
public struct ListenError: Error, Sendable, CustomStringConvertible {
    /// Human explanation naming the address and what to do.
    public let message: String
    public var description: String { message }
}

/// A listening TCP socket that accepts nonblocking connections on its own queue and hands each
/// accepted descriptor to `onAccept`. Backs off for a moment when out of descriptors.
// @unchecked Sendable: all mutable state is touched on `queue` only.
public final class Listener: @unchecked Sendable {
    /// The address actually bound (port 0 resolved).
    public let address: SocketAddress
    private let descriptor: Int32
    private let queue = DispatchQueue(label: "mitm-proxy.accept")
    private let source: DispatchSourceRead
    private var suspended = true
    private var closed = false
    private var backoff: LoopTimer?
    private let onAccept: @Sendable (Int32, SocketAddress) -> Void

    /// Binds and listens on `host:port` (port 0 picks a free port).
    public init(host: String, port: Int, backlog: Int32 = 1024, onAccept: @escaping @Sendable (Int32, SocketAddress) -> Void) throws(ListenError) {
        guard let requested = SocketAddress.numeric(host: host, port: port) else {
            throw ListenError(message: "cannot listen on \(host):\(port): \(host) is not an IP address (use 127.0.0.1, 0.0.0.0 or ::)")
        }
        let descriptor = socket(requested.family, mitm_sock_stream_nonblocking, 0)
        guard descriptor >= 0 else {
            throw ListenError(message: "cannot create a socket: \(SystemCallError(call: "socket", errno: errno))")
        }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = requested.withSockAddr { bind(descriptor, $0, $1) }
        guard bound == 0, Glibc.listen(descriptor, backlog) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            let hint = code == EADDRINUSE ? " (another program uses that port: pick another with --port)" : ""
            throw ListenError(message: "cannot listen on \(requested): \(String(cString: strerror(code)))\(hint)")
        }
        self.descriptor = descriptor
        self.address = SocketAddress.local(of: descriptor) ?? requested
        self.onAccept = onAccept
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setCancelHandler { Glibc.close(descriptor) }
        source.setEventHandler { [weak self] in self?.acceptAll() }
        source.activate()
        source.suspend()
    }

    /// Starts accepting.
    public func start() {
        queue.sync {
            guard !closed, suspended else { return }
            suspended = false
            source.resume()
        }
    }

    /// Stops accepting and closes the listening socket.
    public func close() {
        queue.sync {
            guard !closed else { return }
            closed = true
            backoff?.cancel()
            if suspended { source.resume() }
            source.cancel()
        }
    }

    private func acceptAll() {
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { mitm_accept_nonblocking(descriptor, $0, &length) }
            }
            if accepted >= 0 {
                onAccept(accepted, SocketAddress(storage: storage, length: length))
                continue
            }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                pauseAfterExhaustion()
                return
            default:
                return
            }
        }
    }

    /// A level-triggered accept source spins while the process is out of descriptors: pause briefly.
    private func pauseAfterExhaustion() {
        guard !suspended, !closed else { return }
        suspended = true
        source.suspend()
        backoff = LoopTimer(queue: queue, after: 0.1) { [weak self] in
            guard let self, !self.closed, self.suspended else { return }
            self.suspended = false
            self.source.resume()
        }
    }

    deinit {
        guard !closed else { return }
        if suspended { source.resume() }
        source.cancel()
    }
}
