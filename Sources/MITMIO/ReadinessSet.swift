/// What a registered descriptor is ready for, as reported by a `ReadinessSet`.
struct Readiness: OptionSet, Sendable {
    let rawValue: UInt32

    /// Data (or a FIN, or an error) can be read.
    static let readable = Readiness(rawValue: 1)
    /// Bytes can be written.
    static let writable = Readiness(rawValue: 2)
    /// The peer shut down its sending side.
    static let readHangup = Readiness(rawValue: 4)
    /// Both directions are shut down.
    static let hangup = Readiness(rawValue: 8)
    /// The socket has a pending error.
    static let error = Readiness(rawValue: 16)

    /// Every condition a read must look at: each of them makes `recv` return data, EOF or an error.
    static let readNow: Readiness = [.readable, .readHangup, .hangup, .error]
}

/// One readiness report: the token the descriptor was registered with, and what it is ready for.
struct ReadyEvent {
    var token: UInt64
    var readiness: Readiness
}

/// A kernel readiness set (epoll; kqueue could stand beside it): each descriptor is registered once for
/// its whole life, edge-triggered, with a token that comes back in its events. Used only from its loop.
protocol ReadinessSet: AnyObject {
    /// A descriptor that polls readable while events are pending, for the loop's single wake-up source.
    var descriptor: Int32 { get }

    /// Adds `fd`, edge-triggered: an event is reported each time its readiness for `interest` grows.
    func register(_ fd: Int32, interest: Readiness, token: UInt64) throws(SystemCallError)

    /// Removes `fd`; call before closing it, so that its number can be reused at once.
    func deregister(_ fd: Int32)

    /// Moves up to `events.count` pending events into `events` without blocking; returns how many.
    func poll(into events: UnsafeMutableBufferPointer<ReadyEvent>) -> Int

    /// Closes the set's own descriptor.
    func close()
}
