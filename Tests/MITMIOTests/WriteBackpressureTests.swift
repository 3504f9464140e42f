import Glibc
import MITMIO
import Testing

/// Writes go on until the kernel says `EAGAIN`, and the rest is sent when the peer makes room.
@Suite struct WriteBackpressureTests {
    @Test func aFullSendBufferHoldsTheRestUntilThePeerReads() async throws {
        let loop = EventLoop(index: 0, label: "test.write")
        let (loopEnd, testEnd) = try Descriptors.tcpPair()
        defer { close(testEnd) }
        let recorder = SocketRecorder()
        let total = 8 << 20
        let (socket, bufferedAfterWrite) = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            socket.delegate = recorder
            socket.write([UInt8](repeating: 0x5A, count: total))
            return (socket, socket.bufferedOutputBytes)
        }
        // Nobody reads yet: the kernel took what fits and the socket keeps the rest.
        #expect(bufferedAfterWrite > 0)
        #expect(bufferedAfterWrite < total)

        let received = await OwnThread.run { Descriptors.drain(testEnd, limit: total) }
        #expect(received == total)
        #expect(await recorder.inbox.next() == .drained)
        #expect(await loop.perform { socket.bufferedOutputBytes } == 0)

        // FIN after the queue drains.
        await loop.perform {
            socket.write([1, 2, 3])
            socket.shutdownWriteAfterFlush()
        }
        #expect(await recorder.inbox.next() == .drained)
        let tail = await OwnThread.run { Descriptors.drain(testEnd, limit: .max) }
        #expect(tail == 3)
        await loop.perform { socket.close() }
    }
}
