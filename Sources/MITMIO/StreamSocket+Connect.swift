import CMITMShims

#if canImport(Glibc)
import Glibc
#endif

extension StreamSocket {
    /// Starts a nonblocking connect to `address` on `loop`; `completion` runs on the loop.
    /// Returns the socket while the connect is in progress (nil when it already completed or failed):
    /// closing it abandons the attempt, and `completion` then never runs. Must be called on `loop.queue`.
    @discardableResult
    public static func connect(
        to address: SocketAddress,
        on loop: EventLoop,
        _ completion: @escaping (Result<StreamSocket, SystemCallError>) -> Void
    ) -> StreamSocket? {
        let descriptor = Glibc.socket(address.family, mitm_sock_stream_nonblocking, 0)
        guard descriptor >= 0 else {
            completion(.failure(SystemCallError(call: "socket", errno: errno)))
            return nil
        }
        let result: SystemCallResult<Int32>
        do {
            result = try systemCall("connect") { address.withSockAddr { Glibc.connect(descriptor, $0, $1) } }
        } catch {
            Glibc.close(descriptor)
            completion(.failure(error))
            return nil
        }
        // Registered after connect() so that the set's first report already reflects the attempt's outcome.
        let socket = StreamSocket(descriptor: descriptor, loop: loop)
        if let error = socket.registrationError {
            socket.close()
            completion(.failure(error))
            return nil
        }
        if case .done = result {
            completion(.success(socket))
            return nil
        }
        // The completion keeps the socket alive until the connect finishes; running it breaks the cycle.
        socket.connectCompletion = { error in
            if let error {
                socket.close()
                completion(.failure(error))
            } else {
                completion(.success(socket))
            }
        }
        return socket
    }

    /// Reports the connect's outcome now if it has one (the set may not have reported it yet); otherwise keeps waiting.
    public func settleConnect() { finishConnect() }

    /// The set reported the connecting socket (writable when connected; error and hang-up when refused):
    /// reports SO_ERROR, or keeps waiting when the connect is still under way.
    func finishConnect() {
        guard let completion = connectCompletion else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        if code == 0 && SocketAddress.peer(of: descriptor) == nil { return }
        connectCompletion = nil
        completion(code == 0 ? nil : SystemCallError(call: "connect", errno: code))
    }
}
