import Glibc
import MITMIO
import TestSupport
import Testing

/// A socket holds its delegate `unowned`; delegates detach in their deinit. A socket that outlives a delegate must
/// neither call it nor lose the delegate that took over from it.
@Suite(.tags(.live), .skippedInFastTier) struct DelegateLifetimeTests {
    /// A delegate that records into `recorder` and detaches from `socket` when it goes away, as the proxy's legs do.
    final class Forwarding: StreamSocketDelegate, @unchecked Sendable {
        let socket: StreamSocket
        let recorder: SocketRecorder

        init(socket: StreamSocket, recorder: SocketRecorder) {
            self.socket = socket
            self.recorder = recorder
        }

        deinit { socket.detach(self) }

        func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
            recorder.socket(socket, didRead: bytes)
        }
        func socketDidReadEOF(_ socket: any ByteStream) { recorder.socketDidReadEOF(socket) }
        func socket(_ socket: any ByteStream, didFail error: SystemCallError) {
            recorder.socket(socket, didFail: error)
        }
        func socketDidDrain(_ socket: any ByteStream) { recorder.socketDidDrain(socket) }
    }

    @Test func anEarlierDelegateGoingAwayLeavesTheOneThatTookOver() async throws {
        let loop = EventLoop(index: 0, label: "test.delegate-lifetime")
        let (loopEnd, testEnd) = try Descriptors.unixPair()
        defer { close(testEnd) }
        let earlier = SocketRecorder()
        let later = SocketRecorder()
        let socket = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            var first: Forwarding? = Forwarding(socket: socket, recorder: earlier)
            socket.delegate = first
            socket.delegate = later
            first = nil
            socket.resumeReading()
            return socket
        }
        Descriptors.writeAll(testEnd, [7, 8, 9])
        #expect(await later.bytes(count: 3) == [7, 8, 9])
        #expect(earlier.inbox.isEmpty)
        await loop.perform { socket.close() }
    }

    @Test func aReadTurnAfterTheDelegateWentAwayCallsNobody() async throws {
        let loop = EventLoop(index: 0, label: "test.delegate-lifetime")
        let (loopEnd, testEnd) = try Descriptors.unixPair()
        defer { close(testEnd) }
        // Waiting before reading resumes: resuming queues a read turn, which runs after the delegate is gone.
        Descriptors.writeAll(testEnd, [1, 2, 3])
        let gone = SocketRecorder()
        let socket = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            var delegate: Forwarding? = Forwarding(socket: socket, recorder: gone)
            socket.delegate = delegate
            socket.resumeReading()
            delegate = nil
            return socket
        }
        let next = SocketRecorder()
        #expect(await loop.perform { socket.delegate == nil })
        await loop.perform { socket.delegate = next }
        Descriptors.writeAll(testEnd, [4])
        #expect(await next.bytes(count: 1) == [4])
        #expect(gone.inbox.isEmpty)
        await loop.perform { socket.close() }
    }
}
