import Glibc
import MITMIO
import Synchronization
import TestSupport
import Testing

/// Descriptors opened and closed at a high rate come back with the same numbers at once; no event of a
/// new socket may be lost to the registration of the old one (what per-socket Dispatch sources did on
/// Linux: swift-corelibs-libdispatch issue 833).
@Suite(.tags(.live), .skippedInFastTier) struct DescriptorReuseTests {
    @Test func aHundredThousandOpenCloseCyclesLoseNoEvent() async throws {
        let group = EventLoopGroup(count: 2)
        let chainsPerLoop = 8
        let cyclesPerChain = 6_250
        let numbers = DescriptorNumbers()
        let outcomes = EventInbox<CycleChain.Outcome>()
        var chains: [CycleChain] = []
        for loop in group.loops {
            for _ in 0..<chainsPerLoop {
                chains.append(CycleChain(loop: loop, cycles: cyclesPerChain, numbers: numbers) { outcomes.post($0) })
            }
        }
        for chain in chains { chain.loop.execute { chain.start() } }

        var completed = 0
        for _ in chains {
            // A lost event stalls its chain: the wait gives up and the chain's count says where.
            guard let outcome = await outcomes.next(within: 60) else {
                let counts = await withTaskGroup(of: Int.self) { tasks in
                    for chain in chains { tasks.addTask { await chain.loop.perform { chain.completedCycles } } }
                    return await tasks.reduce(into: [Int]()) { $0.append($1) }
                }
                Issue.record("a chain stalled; cycles completed per chain: \(counts)")
                return
            }
            if let failure = outcome.failure { Issue.record("\(failure)") }
            completed += outcome.cycles
        }
        #expect(completed == chains.count * cyclesPerChain)
        // Numbers came back at once: 200,000 sockets on a few numbers (a few hundred when other tests
        // in the process hold descriptors meanwhile), each number serving hundreds of sockets.
        #expect(numbers.distinctCount <= 1_000)
    }
}

/// Descriptor numbers seen across all chains.
final class DescriptorNumbers: Sendable {
    private let seen = Mutex(Set<Int32>())
    func note(_ number: Int32) { seen.withLock { _ = $0.insert(number) } }
    var distinctCount: Int { seen.withLock { $0.count } }
}

/// One chain of cycles on one loop, each started from the previous one's end: a socket pair, both ends
/// on the loop; one writes a byte and shuts down its side; the other must read the byte and then EOF,
/// and close; the first must then read EOF, and close.
// @unchecked Sendable: every method runs on `loop`.
final class CycleChain: StreamSocketDelegate, @unchecked Sendable {
    struct Outcome: Sendable {
        var cycles: Int
        var failure: String?
    }

    let loop: EventLoop
    private let cycles: Int
    private let numbers: DescriptorNumbers
    private let finish: @Sendable (Outcome) -> Void
    private(set) var completedCycles = 0
    private var writer: StreamSocket?
    private var reader: StreamSocket?
    private var readerGotByte = false

    init(loop: EventLoop, cycles: Int, numbers: DescriptorNumbers, finish: @escaping @Sendable (Outcome) -> Void) {
        self.loop = loop
        self.cycles = cycles
        self.numbers = numbers
        self.finish = finish
    }

    func start() {
        guard completedCycles < cycles else {
            finish(Outcome(cycles: completedCycles))
            return
        }
        var fds: [Int32] = [0, 0]
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, flags, 0, &fds) == 0 else {
            fail("socketpair: errno \(errno)")
            return
        }
        numbers.note(fds[0])
        numbers.note(fds[1])
        readerGotByte = false
        let writer = StreamSocket(descriptor: fds[0], loop: loop)
        let reader = StreamSocket(descriptor: fds[1], loop: loop)
        self.writer = writer
        self.reader = reader
        writer.delegate = self
        reader.delegate = self
        reader.resumeReading()
        writer.resumeReading()
        writer.write([0x2A])
        writer.shutdownWriteAfterFlush()
    }

    func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        guard socket === reader, bytes.count == 1, bytes[0] == 0x2A, !readerGotByte else {
            fail("unexpected read of \(bytes.count) bytes in cycle \(completedCycles)")
            return
        }
        readerGotByte = true
    }

    func socketDidReadEOF(_ socket: any ByteStream) {
        if socket === reader {
            guard readerGotByte else {
                fail("EOF before the byte in cycle \(completedCycles)")
                return
            }
            socket.close()
            reader = nil
        } else {
            // The writer hears EOF once the reader closed.
            guard reader == nil else {
                fail("the writer read EOF before the reader closed, in cycle \(completedCycles)")
                return
            }
            socket.close()
            writer = nil
            completedCycles += 1
            start()
        }
    }

    func socket(_ socket: any ByteStream, didFail error: SystemCallError) {
        fail("\(socket === reader ? "reader" : "writer") failed in cycle \(completedCycles): \(error)")
    }

    func socketDidDrain(_ socket: any ByteStream) {}

    private func fail(_ reason: String) {
        reader?.close()
        writer?.close()
        reader = nil
        writer = nil
        finish(Outcome(cycles: completedCycles, failure: reason))
    }
}
