import CMITMShims
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Why a host name could not be turned into addresses.
public struct NameResolutionError: Error, Sendable, CustomStringConvertible {
    /// The name that was looked up.
    public let host: String
    /// getaddrinfo's explanation.
    public let reason: String
    public var description: String { "DNS lookup of \(host) failed: \(reason)" }
}

/// Host name lookups, off the event loops (getaddrinfo blocks), with fixed overrides like curl's `--resolve`.
public final class NameResolver: Sendable {
    private let overrides: [String: String]
    private let lookupQueue = DispatchQueue(label: "mitm-proxy.dns", attributes: .concurrent)

    /// `overrides` maps lowercase host names to an IP literal used instead of DNS.
    public init(overrides: [String: String] = [:]) {
        self.overrides = overrides
    }

    /// Resolves `host:port`, delivering the result on `loop`.
    public func resolve(
        host: String,
        port: Int,
        on loop: EventLoop,
        _ completion: @escaping @Sendable (Result<[SocketAddress], NameResolutionError>) -> Void
    ) {
        let target = overrides[host.lowercased()] ?? host
        if let address = SocketAddress.numeric(host: target, port: port) {
            loop.execute { completion(.success([address])) }
            return
        }
        if Self.isLocalhostName(target) {
            let loopback = [
                SocketAddress.numeric(host: "127.0.0.1", port: port), SocketAddress.numeric(host: "::1", port: port),
            ]
            loop.execute { completion(.success(loopback.compactMap { $0 })) }
            return
        }
        lookupQueue.async {
            let result = Self.lookUp(host: target, port: port)
            loop.execute { completion(result) }
        }
    }

    /// `localhost` and every name under `.localhost` mean this machine's loopback (RFC 6761 §6.3), as curl,
    /// Go and browsers resolve them, whatever DNS says.
    public static func isLocalhostName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name == "localhost" || name.hasSuffix(".localhost")
    }

    private static func lookUp(host: String, port: Int) -> Result<[SocketAddress], NameResolutionError> {
        var hints = addrinfo()
        hints.ai_socktype = mitm_sock_stream
        hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            return .failure(NameResolutionError(host: host, reason: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = SocketAddress(copying: entry.pointee) { addresses.append(address) }
            cursor = entry.pointee.ai_next
        }
        return addresses.isEmpty
            ? .failure(NameResolutionError(host: host, reason: "no IPv4 or IPv6 address"))
            : .success(addresses)
    }
}
