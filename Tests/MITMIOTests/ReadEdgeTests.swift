import Glibc
import MITMIO
import Testing

/// Reads on an edge-triggered set: every byte and the FIN arrive although the kernel announces each
/// arrival only once.
@Suite struct ReadEdgeTests {
    enum PairKind: CaseIterable { case unix, tcp }

    @Test(arguments: PairKind.allCases)
    func finRightBehindAShortReadIsDelivered(kind: PairKind) async throws {
        let loop = EventLoop(index: 0, label: "test.read-edge")
        let (loopEnd, testEnd) = try kind == .unix ? Descriptors.unixPair() : Descriptors.tcpPair()
        defer { close(testEnd) }
        // Data and FIN are both waiting before the socket joins the set: one edge for the two.
        Descriptors.writeAll(testEnd, Array("hello".utf8))
        shutdown(testEnd, Int32(SHUT_WR))
        let recorder = SocketRecorder()
        let socket = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            socket.delegate = recorder
            socket.resumeReading()
            return socket
        }
        #expect(await recorder.bytes(count: 5) == Array("hello".utf8))
        #expect(await recorder.inbox.next() == .endOfInput)
        await loop.perform { socket.close() }
    }

    @Test func finAfterDataAlreadyReadIsDelivered() async throws {
        let loop = EventLoop(index: 0, label: "test.read-edge")
        let (loopEnd, testEnd) = try Descriptors.tcpPair()
        defer { close(testEnd) }
        let recorder = SocketRecorder()
        let socket = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            socket.delegate = recorder
            socket.resumeReading()
            return socket
        }
        Descriptors.writeAll(testEnd, [1, 2, 3])
        #expect(await recorder.bytes(count: 3) == [1, 2, 3])
        shutdown(testEnd, Int32(SHUT_WR))
        #expect(await recorder.inbox.next() == .endOfInput)
        await loop.perform { socket.close() }
    }

    @Test func resumingWithDataAlreadyWaitingDeliversIt() async throws {
        let loop = EventLoop(index: 0, label: "test.read-edge")
        let (loopEnd, testEnd) = try Descriptors.unixPair()
        let (markerLoopEnd, markerTestEnd) = try Descriptors.unixPair()
        defer {
            close(testEnd)
            close(markerTestEnd)
        }
        let recorder = SocketRecorder(pausesAfterRead: true)
        let marker = SocketRecorder()
        let (socket, markerSocket) = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            socket.delegate = recorder
            socket.resumeReading()
            let markerSocket = StreamSocket(descriptor: markerLoopEnd, loop: loop)
            markerSocket.delegate = marker
            markerSocket.resumeReading()
            return (socket, markerSocket)
        }
        Descriptors.writeAll(testEnd, Array("one".utf8))
        #expect(await recorder.inbox.next() == .read(Array("one".utf8)))
        #expect(await loop.perform { socket.isReading } == false)

        // More data and the FIN arrive while reading is paused: their only edge is reported now. The
        // marker socket's event comes after it, so once the marker is read the edge has been consumed.
        Descriptors.writeAll(testEnd, Array("two".utf8))
        shutdown(testEnd, Int32(SHUT_WR))
        Descriptors.writeAll(markerTestEnd, [0])
        #expect(await marker.inbox.next() == .read([0]))

        await loop.perform { socket.resumeReading() }
        #expect(await recorder.inbox.next() == .read(Array("two".utf8)))
        await loop.perform { socket.resumeReading() }
        #expect(await recorder.inbox.next() == .endOfInput)
        await loop.perform {
            socket.close()
            markerSocket.close()
        }
    }

    @Test func aResetIsReportedAsAFailure() async throws {
        let loop = EventLoop(index: 0, label: "test.read-edge")
        let (loopEnd, testEnd) = try Descriptors.tcpPair()
        let recorder = SocketRecorder()
        let socket = await loop.perform {
            let socket = StreamSocket(descriptor: loopEnd, loop: loop)
            socket.delegate = recorder
            socket.resumeReading()
            return socket
        }
        // SO_LINGER with a zero timeout turns close into a reset.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(testEnd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(testEnd)
        #expect(await recorder.inbox.next() == .failed(errno: ECONNRESET))
        await loop.perform { socket.close() }
    }
}
