#if os(Linux)
import CMITMShims
import Glibc

/// The Linux readiness set: one epoll instance, every descriptor registered with `EPOLLET`.
final class EpollReadinessSet: ReadinessSet {
    let descriptor: Int32

    init() throws(SystemCallError) {
        let descriptor = mitm_epoll_create()
        guard descriptor >= 0 else { throw SystemCallError(call: "epoll_create1", errno: errno) }
        self.descriptor = descriptor
    }

    func register(_ fd: Int32, interest: Readiness, token: UInt64) throws(SystemCallError) {
        guard mitm_epoll_register(descriptor, fd, interest.rawValue, token, 0) == 0 else {
            throw SystemCallError(call: "epoll_ctl(ADD)", errno: errno)
        }
    }

    func deregister(_ fd: Int32) {
        _ = mitm_epoll_deregister(descriptor, fd)
    }

    func poll(into events: UnsafeMutableBufferPointer<ReadyEvent>) -> Int {
        while true {
            let count = events.withMemoryRebound(to: mitm_ready_event.self) { raw in
                mitm_epoll_poll(descriptor, raw.baseAddress, Int32(raw.count))
            }
            if count >= 0 { return Int(count) }
            if errno != EINTR { return 0 }
        }
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
#endif
