import Foundation
import MITMCore
import MITMIO

/// A TCP connection attempt to an upstream: resolves (honouring `--resolve`), then tries each address
/// in turn, all within `timeout` seconds. The completion runs once, on the loop; `cancel()` suppresses it.
final class UpstreamConnector {
    private let loop: EventLoop
    private let clock: ProxyClock
    private var completion: ((Result<UpstreamConnection, UpstreamFailure>) -> Void)?
    /// Monotonic nanoseconds: the start, the name's resolution, the current address's connect.
    private let started: UInt64
    private var resolved: UInt64?
    private var connectStarted: UInt64
    private var addresses: [SocketAddress] = []
    private var lastError: SystemCallError?
    private let host: String
    private let port: Int
    private var attempt: StreamSocket?
    private var timer: (any ClockTimer)?
    private let isOwnAddress: (SocketAddress) -> Bool
    /// A client on another machine, kept from this machine's addresses.
    private let guardedClient: String?

    private init(
        host: String, port: Int, guardedClient: String?, loop: EventLoop, clock: ProxyClock,
        isOwnAddress: @escaping (SocketAddress) -> Bool,
        completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) {
        self.clock = clock
        started = clock.now()
        connectStarted = started
        self.host = host
        self.port = port
        self.guardedClient = guardedClient
        self.loop = loop
        self.isOwnAddress = isOwnAddress
        self.completion = completion
    }

    /// Starts connecting to `host:port`; after `timeout` seconds without a connection it fails with a timeout.
    /// Addresses that are the proxy's own listener are never dialled, nor, for a `guardedClient`, this machine's addresses.
    @discardableResult
    static func connect(
        host: String,
        port: Int,
        guardedClient: String?,
        context: ProxyContext,
        loop: EventLoop,
        _ completion: @escaping (Result<UpstreamConnection, UpstreamFailure>) -> Void
    ) -> UpstreamConnector {
        let timeout = context.configuration.handshakeTimeout
        let connector = UpstreamConnector(
            host: host, port: port, guardedClient: guardedClient, loop: loop, clock: context.clock,
            isOwnAddress: { [ownListener = context.ownListener] in ownListener.isOwn(host: $0.host, port: $0.port) },
            completion: completion)
        nonisolated(unsafe) let unsafeConnector = connector
        connector.timer = context.clock.schedule(after: timeout, on: loop) {
            unsafeConnector.timedOut(after: timeout)
        }
        context.resolver.resolve(host: host, port: port, on: loop) { result in
            unsafeConnector.resolved(result)
        }
        return connector
    }

    /// Abandons the attempt: closes a connect in progress; a socket that connects later is closed.
    func cancel() {
        completion = nil
        timer?.cancel()
        timer = nil
        attempt?.close()
        attempt = nil
    }

    /// Completes now if the connect under way has ended (its completion then runs inside this call).
    func settleIfConnected() { attempt?.settleConnect() }

    private func timedOut(after timeout: Duration) {
        guard completion != nil else { return }
        attempt?.close()
        attempt = nil
        let reason = "connection timed out (no answer within \(SecondsText.format(timeout)))"
        finish(.failure(UpstreamFailure(host: host, port: port, reason: reason)))
    }

    private func resolved(_ result: Result<[SocketAddress], NameResolutionError>) {
        guard completion != nil else { return }
        resolved = clock.now()
        switch result {
        case .failure(let error):
            finish(.failure(UpstreamFailure(host: host, port: port, reason: error.description)))
        case .success(let found):
            addresses = found.filter { !isOwnAddress($0) }
            guard !addresses.isEmpty else {
                finish(
                    .failure(
                        UpstreamFailure(host: host, port: port, reason: OwnListener.loopReason(host: host, port: port)))
                )
                return
            }
            if guardedClient != nil {
                let elsewhere = addresses.filter { !LocalTargetGuard.isThisMachine($0.host) }
                guard !elsewhere.isEmpty else {
                    let reason = LocalTargetGuard.reason(
                        host: host, port: port, address: addresses[0].host, client: guardedClient)
                    finish(.failure(UpstreamFailure(host: host, port: port, reason: reason, refusedLocalTarget: true)))
                    return
                }
                addresses = elsewhere
            }
            tryNext()
        }
    }

    private func tryNext() {
        guard completion != nil else { return }
        guard !addresses.isEmpty else {
            let reason = lastError.map { Self.explain($0) } ?? "no address to connect to"
            finish(.failure(UpstreamFailure(host: host, port: port, reason: reason)))
            return
        }
        let address = addresses.removeFirst()
        connectStarted = clock.now()
        attempt = StreamSocket.connect(to: address, on: loop) { [self] result in
            attempt = nil
            switch result {
            case .success(let socket):
                if completion == nil {
                    socket.close()
                } else {
                    let dnsEnd = resolved ?? started
                    finish(
                        .success(
                            UpstreamConnection(
                                socket: socket, address: address.host,
                                dnsMilliseconds: Double(dnsEnd &- min(dnsEnd, started)) / 1e6,
                                connectMilliseconds: clock.milliseconds(since: connectStarted))))
                }
            case .failure(let error):
                lastError = error
                tryNext()
            }
        }
    }

    private func finish(_ result: Result<UpstreamConnection, UpstreamFailure>) {
        let callback = completion
        completion = nil
        timer?.cancel()
        timer = nil
        callback?(result)
    }

    private static func explain(_ error: SystemCallError) -> String {
        switch error.errno {
        case ECONNREFUSED: return "connection refused (nothing listens on that port)"
        case ETIMEDOUT: return "connection timed out"
        case ENETUNREACH, EHOSTUNREACH: return "host unreachable"
        default: return error.description
        }
    }
}

/// A connected upstream socket and what it took to get it.
struct UpstreamConnection {
    let socket: any ByteStream
    /// The IP address connected to.
    let address: String
    let dnsMilliseconds: Double
    let connectMilliseconds: Double
}

/// A failure to reach or talk to an upstream server.
struct UpstreamFailure: Error, CustomStringConvertible {
    let host: String
    let port: Int
    let reason: String
    /// The target is this machine and the client is not (`--allow-local-targets`): answered `403`, not `502`.
    var refusedLocalTarget = false
    var description: String { "\(host):\(port): \(reason)" }
}

#if canImport(Glibc)
import Glibc
#endif

/// What making an upstream connection cost, for the first exchange over it.
struct UpstreamConnectionTimings {
    let dns: Double
    let connect: Double
    let ssl: Double
    let address: String
}
