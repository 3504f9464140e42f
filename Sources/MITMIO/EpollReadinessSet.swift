#if os(Linux)
import CMITMShims
import Glibc

/// The Linux readiness set: one epoll instance, every descriptor registered with `EPOLLET`, and an
/// eventfd registered under `ReadyEvent.wakeToken` for wake-ups from other threads.
// @unchecked Sendable: the kernel serializes epoll_ctl, epoll_wait and eventfd writes; the two
// descriptors are immutable until `close()`, which the loop calls after its last `wait`.
final class EpollReadinessSet: ReadinessSet, @unchecked Sendable {
    private let descriptor: Int32
    private let wakeDescriptor: Int32

    init() throws(SystemCallError) {
        let descriptor = mitm_epoll_create()
        guard descriptor >= 0 else { throw SystemCallError(call: "epoll_create1", errno: errno) }
        let wakeDescriptor = mitm_eventfd_create()
        guard wakeDescriptor >= 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw SystemCallError(call: "eventfd", errno: code)
        }
        guard mitm_epoll_register(descriptor, wakeDescriptor, Readiness.readable.rawValue, ReadyEvent.wakeToken, 0) == 0
        else {
            let code = errno
            Glibc.close(wakeDescriptor)
            Glibc.close(descriptor)
            throw SystemCallError(call: "epoll_ctl(ADD eventfd)", errno: code)
        }
        self.descriptor = descriptor
        self.wakeDescriptor = wakeDescriptor
    }

    func register(_ fd: Int32, interest: Readiness, token: UInt64, exclusive: Bool) throws(SystemCallError) {
        let result =
            exclusive
            ? mitm_epoll_register_exclusive(descriptor, fd, token)
            : mitm_epoll_register(descriptor, fd, interest.rawValue, token, 0)
        guard result == 0 else {
            throw SystemCallError(call: "epoll_ctl(ADD)", errno: errno)
        }
    }

    func deregister(_ fd: Int32) {
        _ = mitm_epoll_deregister(descriptor, fd)
    }

    func wait(into events: UnsafeMutableBufferPointer<ReadyEvent>, timeoutMilliseconds: Int32) -> Int {
        let count = events.withMemoryRebound(to: mitm_ready_event.self) { raw in
            mitm_epoll_wait(descriptor, raw.baseAddress, Int32(raw.count), timeoutMilliseconds)
        }
        // EINTR (a signal, or a debugger attaching) returns to the loop, which waits again.
        return max(0, Int(count))
    }

    func wake() {
        mitm_eventfd_signal(wakeDescriptor)
    }

    func acknowledgeWake() {
        mitm_eventfd_drain(wakeDescriptor)
    }

    func close() {
        _ = Glibc.close(wakeDescriptor)
        _ = Glibc.close(descriptor)
    }
}
#endif
