import Glibc
import MITMIO
import Synchronization
import TestSupport
import Testing

/// A listener sits in every loop's readiness set: each connection is accepted once, by one loop, and handed over on
/// that loop's own queue.
@Suite(.tags(.live), .skippedInFastTier) struct ListenerTests {
    @Test func everyConnectionIsAcceptedOnceOnTheLoopThatTookIt() async throws {
        let group = EventLoopGroup(count: 2)
        let accepted = EventInbox<Bool>()
        let listener = try Listener(host: "127.0.0.1", port: 0, loops: group.loops) { descriptor, _, loop in
            Glibc.close(descriptor)
            accepted.post(loop.isCurrent)
        }
        listener.start()
        let connections = 300
        var clients: [Int32] = []
        for _ in 0..<connections {
            clients.append(try Self.connect(port: listener.address.port))
        }
        var onTheirLoop = 0
        var arrived = 0
        for _ in 0..<connections {
            guard let wasCurrent = await accepted.next(within: 10) else { break }
            arrived += 1
            if wasCurrent { onTheirLoop += 1 }
        }
        #expect(arrived == connections, "a connection was never accepted")
        #expect(onTheirLoop == arrived, "onAccept ran off the loop it was given")
        listener.close()
        clients.forEach { _ = Glibc.close($0) }
        #expect(await accepted.next(within: 0.2) == nil, "a connection was accepted twice")
    }

    /// A blocking loopback connection to `port`.
    private static func connect(port: Int) throws -> Int32 {
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = Descriptors.loopback(port: UInt16(port))
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            Glibc.close(client)
            throw Descriptors.SetupError(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        return client
    }
}
