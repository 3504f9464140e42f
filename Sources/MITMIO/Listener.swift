import CMITMShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why the proxy could not listen.
public struct ListenError: Error, Sendable, CustomStringConvertible {
    /// Human explanation naming the address and what to do.
    public let message: String
    public var description: String { message }
}

/// A listening TCP socket in the readiness set of every loop it serves: a new connection wakes one of them
/// (`EPOLLEXCLUSIVE`), which accepts it and hands the descriptor to `onAccept` on its own queue, so a
/// connection starts on the loop that accepted it without a hand-over between threads. Backs off for a
/// moment when out of descriptors.
// @unchecked Sendable: `closed` is atomic; each slot's state is confined to its loop.
public final class Listener: @unchecked Sendable {
    /// The address actually bound (port 0 resolved).
    public let address: SocketAddress
    private let descriptor: Int32
    private let slots: [AcceptSlot]
    private let closed = Atomic<Bool>(false)

    /// Binds and listens on `host:port` (port 0 picks a free port) for `loops`. A connection from a peer `admits`
    /// turns down is closed at once, never handed to `onAccept`, which runs on the loop given to it.
    public init(
        host: String, port: Int, backlog: Int32 = 1024, loops: [EventLoop],
        admits: @escaping @Sendable (SocketAddress) -> Bool = { _ in true },
        onAccept: @escaping @Sendable (Int32, SocketAddress, EventLoop) -> Void
    ) throws(ListenError) {
        precondition(!loops.isEmpty, "a listener needs a loop to accept on")
        guard let requested = SocketAddress.numeric(host: host, port: port) else {
            throw ListenError(
                message: "cannot listen on \(host):\(port): \(host) is not an IP address (use 127.0.0.1, 0.0.0.0 or ::)"
            )
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
        slots = loops.map { AcceptSlot(loop: $0, descriptor: descriptor, admits: admits, onAccept: onAccept) }
        for slot in slots {
            do {
                try slot.join()
            } catch {
                slots.forEach { $0.leave() }
                Glibc.close(descriptor)
                throw ListenError(message: "cannot watch the listening socket: \(error)")
            }
        }
    }

    /// Starts accepting.
    public func start() {
        guard !closed.load(ordering: .acquiring) else { return }
        slots.forEach { $0.start() }
    }

    /// Stops accepting and closes the listening socket.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        slots.forEach { $0.leave() }
        Glibc.close(descriptor)
    }

    deinit { close() }
}

/// The listening socket's place in one loop's readiness set; its state is confined to that loop.
// @unchecked Sendable: everything mutable is touched on `loop`'s queue only.
private final class AcceptSlot: ReadinessHandler, @unchecked Sendable {
    private let loop: EventLoop
    private let descriptor: Int32
    private let admits: @Sendable (SocketAddress) -> Bool
    private let onAccept: @Sendable (Int32, SocketAddress, EventLoop) -> Void
    private var token: UInt64?
    private var accepting = false
    private var backoff: LoopTimer?
    /// How many connections one loop turn accepts before it lets the loop's other sockets and timers run.
    private static let acceptsPerTurn = 64

    init(
        loop: EventLoop, descriptor: Int32, admits: @escaping @Sendable (SocketAddress) -> Bool,
        onAccept: @escaping @Sendable (Int32, SocketAddress, EventLoop) -> Void
    ) {
        self.loop = loop
        self.descriptor = descriptor
        self.admits = admits
        self.onAccept = onAccept
    }

    /// Adds the listening socket to the loop's readiness set, waking this loop alone for a connection.
    func join() throws(SystemCallError) {
        let registration = onLoop {
            Result { () throws(SystemCallError) in
                try loop.register(descriptor, interest: .readable, exclusive: true, handler: self)
            }
        }
        token = try registration.get()
    }

    func start() {
        onLoop {
            guard token != nil, !accepting else { return }
            accepting = true
            // Connections that queued up before now raised their only event already.
            loop.execute { [self] in acceptAll() }
        }
    }

    /// Takes the listening socket out of the loop's readiness set (the listener closes it next).
    func leave() {
        onLoop {
            accepting = false
            backoff?.cancel()
            guard let token else { return }
            self.token = nil
            loop.deregister(descriptor, token: token)
        }
    }

    func readinessChanged(_ readiness: Readiness) {
        if accepting { acceptAll() }
    }

    private func onLoop<T>(_ work: () -> T) -> T {
        loop.isCurrent ? work() : loop.sync(work)
    }

    /// Accepts until `EAGAIN` (edge-triggered: pending connections raise no further event).
    private func acceptAll() {
        for _ in 0..<Self.acceptsPerTurn {
            guard accepting else { return }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    mitm_accept_nonblocking(descriptor, $0, &length)
                }
            }
            if accepted >= 0 {
                let peer = SocketAddress(storage: storage, length: length)
                if admits(peer) {
                    onAccept(accepted, peer, loop)
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
        loop.execute { [self] in acceptAll() }
    }

    /// Out of descriptors: the connection stays queued and no new event would come for it, so stop
    /// accepting for a moment and try again on a timer.
    private func pauseAfterExhaustion() {
        guard accepting else { return }
        accepting = false
        backoff = loop.schedule(after: 0.1) { [weak self] in
            guard let self, token != nil else { return }
            accepting = true
            acceptAll()
        }
    }
}
