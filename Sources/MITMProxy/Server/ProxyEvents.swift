import MITMCore
import MITMRecording

/// The events of one proxy as they happen (`ProxyServer.events`): each iteration subscribes anew and sees the events
/// emitted from then on, in order. Iteration ends when the proxy stops (after the events emitted before it stopped)
/// or when the iterating task is cancelled; either way the subscription ends with it.
///
/// ```swift
/// for await event in proxy.events {
///     if case .verdict(let verdict) = event, verdict.host == "api.example.test" { break }
/// }
/// ```
///
/// An iteration buffers up to `bufferLimit` events it has not read yet; past that, newer events are dropped for it and
/// counted in `ProxyServer.droppedEventCount`.
public struct ProxyEvents: AsyncSequence, Sendable {
    /// One event.
    public typealias Element = ProxyEvent
    /// Iteration never throws: it ends with nil.
    public typealias Failure = Never

    /// Unread events an iteration holds at most.
    public let bufferLimit: Int
    private let fanOut: EventFanOut

    init(fanOut: EventFanOut, bufferLimit: Int) {
        self.fanOut = fanOut
        self.bufferLimit = bufferLimit
    }

    /// Subscribes to the proxy's events; the subscription ends with the iteration.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ProxyEvent.self, bufferingPolicy: .bufferingOldest(bufferLimit))
        let fanOut = fanOut
        let id = fanOut.add(
            takesRequestEvents: true,
            deliver: { event in
                if case .dropped = continuation.yield(event) { fanOut.countDropped() }
            }, finish: { continuation.finish() })
        if let id {
            continuation.onTermination = { _ in fanOut.unsubscribe(id) }
        } else {
            continuation.finish()
        }
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// Reads one iteration's events.
    public struct Iterator: AsyncIteratorProtocol {
        /// One event.
        public typealias Element = ProxyEvent
        /// `next()` never throws: it returns nil at the end.
        public typealias Failure = Never

        private var base: AsyncStream<ProxyEvent>.Iterator

        init(base: AsyncStream<ProxyEvent>.Iterator) {
            self.base = base
        }

        /// Waits for the next event; nil once the proxy stopped (and every earlier event was read) or the task was
        /// cancelled.
        public mutating func next() async -> ProxyEvent? {
            await base.next()
        }
    }
}
