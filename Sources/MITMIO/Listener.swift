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

/// A listening TCP socket that accepts nonblocking connections on a loop of its own and hands each
/// accepted descriptor to `onAccept`. Backs off for a moment when out of descriptors.
// @unchecked Sendable: all mutable state is touched on `loop.queue` only.
public final class Listener: @unchecked Sendable {
    /// The address actually bound (port 0 resolved).
    public let address: SocketAddress
    private let descriptor: Int32
    private let loop = EventLoop(index: 0, label: "mitm-proxy.accept")
    private var token: UInt64 = 0
    private var accepting = false
    private var closed = false
    private var backoff: LoopTimer?
    private let onAccept: @Sendable (Int32, SocketAddress) -> Void
    private let admits: @Sendable (SocketAddress) -> Bool
    /// How many connections one loop turn accepts before it lets the loop's timers run.
    private static let acceptsPerTurn = 64

    /// Binds and listens on `host:port` (port 0 picks a free port). A connection from a peer `admits` turns down is
    /// closed at once, never handed to `onAccept`.
    public init(host: String, port: Int, backlog: Int32 = 1024, admits: @escaping @Sendable (SocketAddress) -> Bool = { _ in true },
                onAccept: @escaping @Sendable (Int32, SocketAddress) -> Void) throws(ListenError) {
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
        self.admits = admits
        let registration = loop.sync { Result { () throws(SystemCallError) in try loop.register(descriptor, interest: .readable, handler: self) } }
        switch registration {
        case .success(let token):
            self.token = token
        case .failure(let error):
            Glibc.close(descriptor)
            throw ListenError(message: "cannot watch the listening socket: \(error)")
        }
    }

    /// Starts accepting.
    public func start() {
        loop.sync {
            guard !closed, !accepting else { return }
            accepting = true
            // Connections that queued up before now raised their only event already.
            loop.execute { [self] in acceptAll() }
        }
    }

    /// Stops accepting and closes the listening socket.
    public func close() {
        loop.sync { closeOnLoop() }
    }

    private func closeOnLoop() {
        guard !closed else { return }
        closed = true
        accepting = false
        backoff?.cancel()
        loop.deregister(descriptor, token: token)
        Glibc.close(descriptor)
    }

    /// Accepts until `EAGAIN` (edge-triggered: pending connections raise no further event).
    private func acceptAll() {
        for _ in 0..<Self.acceptsPerTurn {
            guard accepting else { return }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { mitm_accept_nonblocking(descriptor, $0, &length) }
            }
            if accepted >= 0 {
                let peer = SocketAddress(storage: storage, length: length)
                if admits(peer) {
                    onAccept(accepted, peer)
                } else {
                    Glibc.close(accepted)
                }
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
        loop.execute { [weak self] in self?.acceptAll() }
    }

    /// Out of descriptors: the connection stays queued and no new event would come for it, so stop
    /// accepting for a moment and try again on a timer.
    private func pauseAfterExhaustion() {
        guard accepting, !closed else { return }
        accepting = false
        backoff = loop.schedule(after: 0.1) { [weak self] in
            guard let self, !self.closed else { return }
            self.accepting = true
            self.acceptAll()
        }
    }

    deinit {
        guard !closed else { return }
        loop.deregister(descriptor, token: token)
        Glibc.close(descriptor)
    }
}

extension Listener: ReadinessHandler {
    func readinessChanged(_ readiness: Readiness) {
        if accepting { acceptAll() }
    }
}
