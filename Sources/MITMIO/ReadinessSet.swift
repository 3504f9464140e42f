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

    /// The token of the set's own wake-up event (`ReadinessSet.wake()`); descriptors get tokens from 1.
    static let wakeToken: UInt64 = 0
}

/// A kernel readiness set (epoll; kqueue could stand beside it): each descriptor is registered once for
/// its whole life, edge-triggered, with a token that comes back in its events. Registration and `wake()` may
/// come from any thread; `wait` only from the loop's thread.
protocol ReadinessSet: AnyObject, Sendable {
    /// Adds `fd`, edge-triggered: an event is reported each time its readiness for `interest` grows. An `exclusive`
    /// registration (a listening socket several loops' sets hold, for reading) wakes one of the loops waiting on it.
    func register(_ fd: Int32, interest: Readiness, token: UInt64, exclusive: Bool) throws(SystemCallError)

    /// Removes `fd`; call before closing it, so that its number can be reused at once.
    func deregister(_ fd: Int32)

    /// Moves up to `events.count` pending events into `events`, waiting for the first one at most
    /// `timeoutMilliseconds` (-1: as long as it takes; 0: not at all); returns how many.
    func wait(into events: UnsafeMutableBufferPointer<ReadyEvent>, timeoutMilliseconds: Int32) -> Int

    /// Makes a `wait` in progress (or the next one) return an event with `ReadyEvent.wakeToken`. Any thread.
    func wake()

    /// Takes back the wake-ups reported so far, after a `ReadyEvent.wakeToken` event.
    func acknowledgeWake()

    /// Closes the set's own descriptor.
    func close()
}
