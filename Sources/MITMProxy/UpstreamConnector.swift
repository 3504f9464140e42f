import MITMIO

/// A TCP connection attempt to an upstream: resolves (honouring `--resolve`), then tries each address
/// in turn. The completion runs once, on the loop; `cancel()` suppresses it.
final class UpstreamConnector {
    private let loop: EventLoop
    private var completion: ((Result<StreamSocket, UpstreamFailure>) -> Void)?
    private var addresses: [SocketAddress] = []
    private var lastError: SystemCallError?
    private let host: String
    private let port: Int

    private init(host: String, port: Int, loop: EventLoop, completion: @escaping (Result<StreamSocket, UpstreamFailure>) -> Void) {
        self.host = host
        self.port = port
        self.loop = loop
        self.completion = completion
    }

    /// Starts connecting to `host:port`.
    @discardableResult
    static func connect(
        host: String,
        port: Int,
        resolver: NameResolver,
        loop: EventLoop,
        _ completion: @escaping (Result<StreamSocket, UpstreamFailure>) -> Void
    ) -> UpstreamConnector {
        let connector = UpstreamConnector(host: host, port: port, loop: loop, completion: completion)
        nonisolated(unsafe) let unsafeConnector = connector
        resolver.resolve(host: host, port: port, on: loop) { result in
            unsafeConnector.resolved(result)
        }
        return connector
    }

    /// Abandons the attempt; a socket that connects later is closed.
    func cancel() { completion = nil }

    private func resolved(_ result: Result<[SocketAddress], NameResolutionError>) {
        guard completion != nil else { return }
        switch result {
        case .failure(let error):
            finish(.failure(UpstreamFailure(host: host, port: port, reason: error.description)))
        case .success(let found):
            addresses = found
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
        StreamSocket.connect(to: address, on: loop) { [self] result in
            switch result {
            case .success(let socket):
                if completion == nil {
                    socket.close()
                } else {
                    finish(.success(socket))
                }
            case .failure(let error):
                lastError = error
                tryNext()
            }
        }
    }

    private func finish(_ result: Result<StreamSocket, UpstreamFailure>) {
        let callback = completion
        completion = nil
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

/// A failure to reach or talk to an upstream server.
struct UpstreamFailure: Error, CustomStringConvertible {
    let host: String
    let port: Int
    let reason: String
    var description: String { "\(host):\(port): \(reason)" }
}

#if canImport(Glibc)
import Glibc
#endif
