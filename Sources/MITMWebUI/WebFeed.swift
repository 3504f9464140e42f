import MITMCore
import MITMIO
import Synchronization

/// One open page's live feed: filled on the recording queue, emptied by the page's connection on its loop, which
/// is woken once per batch (never per message) and writes only while its output is under its mark.
package final class WebFeed: Sendable {
    private let queue: Mutex<WebFeedQueue>
    private let loop: EventLoop
    private let wake: @Sendable () -> Void

    /// A feed holding at most `capacity` bytes of flow messages; `wake` runs on `loop` when there is something to write.
    init(capacity: Int, loop: EventLoop, wake: @escaping @Sendable () -> Void) {
        queue = Mutex(WebFeedQueue(capacity: capacity))
        self.loop = loop
        self.wake = wake
    }

    /// Queues a flow message (recording queue).
    func pushFlow(_ frame: [UInt8]) {
        if queue.withLock({ $0.pushFlow(frame) }) { loop.execute(wake) }
    }

    /// Queues the latest board, replacing one not yet written (recording or web queue).
    func pushBoard(_ frame: [UInt8]) {
        if queue.withLock({ $0.pushBoard(frame) }) { loop.execute(wake) }
    }

    /// What to write now (the connection's loop).
    func take() -> [UInt8] { queue.withLock { $0.take() } }

    /// The connection's output is full: hold messages until `drained()` (the connection's loop).
    func blocked() { queue.withLock { $0.blocked() } }

    /// The connection's output drained: whether to take now (the connection's loop).
    func drained() -> Bool { queue.withLock { $0.drained() } }

    /// Flow messages dropped for this page in all.
    var droppedTotal: Int { queue.withLock { $0.droppedTotal } }
}
