import Foundation
import MITMCore
import MITMIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Answers the DNS questions of a captured client command (UDP, on this machine's address on the namespace's link):
/// an A question gets a fake address remembered for its name (`CapturedNames`), any other type an empty answer, so
/// that every name resolves and its connections arrive with a name. A datagram costs one small answer; a thread of its
/// own reads them (a handful per client run).
final class DNSResponder: Sendable {
    /// The bound address (port 0 resolved).
    let address: SocketAddress
    private let descriptor: Int32
    private let names: CapturedNames
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    init(host: String, names: CapturedNames) throws(ProxyStartError) {
        guard let requested = SocketAddress.numeric(host: host, port: 0) else {
            throw ProxyStartError.captureDNS(reason: "\(host) is not an IP address")
        }
        let descriptor = socket(requested.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw ProxyStartError.captureDNS(reason: "cannot create a UDP socket: \(String(cString: strerror(errno)))")
        }
        guard requested.withSockAddr({ bind(descriptor, $0, $1) }) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw ProxyStartError.captureDNS(reason: "cannot bind \(host): \(reason)")
        }
        self.descriptor = descriptor
        self.names = names
        address = SocketAddress.local(of: descriptor) ?? requested
    }

    func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            serve()
            finished.signal()
        }
        thread.name = "mitm-proxy.dns"
        thread.start()
    }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while !stopped.load(ordering: .acquiring) {
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &peer) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, bytes.baseAddress, bytes.count, 0, $0, &peerLength)
                    }
                }
            }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return }
            // 0: an empty datagram (ignored: the command's DNS must outlive it), or `stop()` shut the socket down, which
            // the loop's condition sees.
            guard count > 0, let answer = answer(Array(buffer[..<count])) else { continue }
            _ = answer.withUnsafeBytes { bytes in
                withUnsafePointer(to: &peer) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, peerLength)
                    }
                }
            }
        }
    }

    /// The answer to one datagram, or nil for one that gets none.
    func answer(_ datagram: [UInt8]) -> [UInt8]? {
        do {
            let query = try DNSQuery.parse(datagram)
            // A name that is no host name gets no address: its connections would arrive named by it.
            guard query.type == DNSQuery.typeA, query.recordClass == 1, let name = query.hostName else {
                return query.answer(address: nil)
            }
            return query.answer(address: names.address(for: name))
        } catch {
            return DNSQuery.answer(to: error)
        }
    }

    /// Stops answering and closes the socket (waits for the reading thread, which the shutdown wakes).
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(descriptor, Int32(SHUT_RDWR))
        if running.load(ordering: .acquiring) { finished.wait() }
        Glibc.close(descriptor)
    }
}
