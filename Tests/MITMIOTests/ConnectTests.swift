import Glibc
import MITMIO
import TestSupport
import Testing

/// `StreamSocket.connect`: its completion runs once, on the loop, with the outcome.
@Suite(.tags(.live), .skippedInFastTier) struct ConnectTests {
    /// `settledEarly`: the connect is also settled in the turn that started it, as an interception asks for its
    /// upstream before the readiness set reports the connect; it completes once, whichever finishes it.
    @Test(arguments: [false, true]) func aRefusedConnectReportsFailure(settledEarly: Bool) async throws {
        let loop = EventLoop(index: 0, label: "test.connect")
        let refusing = try LoopbackListener(listens: false)
        let address = try #require(SocketAddress.numeric(host: "127.0.0.1", port: Int(refusing.port)))
        let outcome = EventInbox<Result<StreamSocket, SystemCallError>>()
        await loop.perform {
            let attempt = StreamSocket.connect(to: address, on: loop) { outcome.post($0) }
            if settledEarly { attempt?.settleConnect() }
        }
        let result = await outcome.next()
        guard case .failure(let error)? = result else {
            Issue.record("expected a refused connect, got \(String(describing: result))")
            return
        }
        #expect(error.errno == ECONNREFUSED)
        await loop.perform {}
        #expect(outcome.isEmpty, "the completion ran more than once")
    }

    @Test(arguments: [false, true]) func aConnectToAListenerSucceedsAndCarriesData(settledEarly: Bool) async throws {
        let loop = EventLoop(index: 0, label: "test.connect")
        let listener = try LoopbackListener()
        let address = try #require(SocketAddress.numeric(host: "127.0.0.1", port: Int(listener.port)))
        let outcome = EventInbox<Result<StreamSocket, SystemCallError>>()
        await loop.perform {
            let attempt = StreamSocket.connect(to: address, on: loop) { outcome.post($0) }
            if settledEarly {
                attempt?.settleConnect()
                attempt?.settleConnect()
            }
        }
        let accepted = try listener.acceptOne()
        defer { close(accepted) }
        guard case .success(let socket)? = await outcome.next() else {
            Issue.record("the connect did not complete")
            return
        }
        let recorder = SocketRecorder()
        await loop.perform {
            if settledEarly { socket.settleConnect() }
            socket.delegate = recorder
            socket.resumeReading()
            socket.write(Array("ping".utf8))
        }
        #expect(await recorder.inbox.next() == .drained)
        Descriptors.writeAll(accepted, Array("pong".utf8))
        #expect(await recorder.bytes(count: 4) == Array("pong".utf8))
        await loop.perform { socket.close() }
        #expect(outcome.isEmpty, "the completion ran more than once")
    }
}
