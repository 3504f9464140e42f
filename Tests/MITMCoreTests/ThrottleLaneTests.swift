import MITMCore
import Testing

/// The throttle lanes moved by a hand clock: bandwidth, delay, loss and the feeder's limit, without sockets.
@Suite struct ThrottleLaneTests {
    private static let second: UInt64 = 1_000_000_000

    /// Releases everything from `lane` by waking it when it asks; returns the time the last byte left.
    private func drain(_ lane: inout ThrottleLane, from start: UInt64, random: () -> Double = { 1 }) -> (
        bytes: Int, end: UInt64, wakes: Int
    ) {
        var now = start
        var released = 0
        var wakes = 0
        while let wake = lane.nextWake(now: now), wakes < 1_000_000 {
            now = max(now, wake)
            released += lane.release(now: now, random: random).count
            wakes += 1
        }
        return (released, now, wakes)
    }

    @Test func bandwidthSpreadsBytesOverTime() {
        var lane = NetworkConditions(down: 512_000).downLane()
        lane.enqueue([UInt8](repeating: 7, count: 256 * 1024), now: 0)
        let (bytes, end, wakes) = drain(&lane, from: 0)
        #expect(bytes == 256 * 1024)
        // 2,097,152 bits at 512 kbit/s: 4.1 s, less the initial burst of 20 ms.
        let seconds = Double(end) / 1e9
        #expect(seconds > 4.0 && seconds < 4.2, "\(seconds)")
        #expect(wakes < 500, "\(wakes) wake-ups")
        #expect(lane.isEmpty)
    }

    @Test func latencyHoldsEveryByteHalfARoundTrip() {
        var lane = NetworkConditions(latency: 0.3).upLane()
        lane.enqueue([1, 2, 3], now: 10 * Self.second)
        #expect(lane.release(now: 10 * Self.second, random: { 1 }).count == 0)
        #expect(lane.nextWake(now: 10 * Self.second) == 10 * Self.second + 150_000_000)
        #expect(lane.release(now: 10 * Self.second + 150_000_000, random: { 1 }) == [1, 2, 3])
        lane.markEnd(now: 11 * Self.second)
        #expect(!lane.endIsDue(now: 11 * Self.second))
        #expect(lane.endIsDue(now: 11 * Self.second + 150_000_000))
    }

    @Test func theFeederPausesLongBeforeAWholeBodyIsHeld() {
        var lane = NetworkConditions(down: 512_000, latency: 0.2).downLane()
        // 64 KB/s over 0.1 s of delay plus a tenth of a second: 16 KiB at least, about 12.8 KB here.
        #expect(lane.limit == 16 * 1024)
        lane.enqueue([UInt8](repeating: 0, count: 16 * 1024), now: 0)
        #expect(lane.isFull)
        #expect(NetworkConditions(down: 50e6, latency: 0.1).downLane().limit == 937_500)
    }

    @Test func lossStallsButNeverDropsBytes() {
        var lossy = NetworkConditions(down: 8e6, loss: 0.5).downLane()
        var clean = NetworkConditions(down: 8e6).downLane()
        let body = (0..<200_000).map { UInt8($0 % 251) }
        lossy.enqueue(body, now: 0)
        clean.enqueue(body, now: 0)
        var generator = SplitMix64(seed: 7)
        var now: UInt64 = 0
        var received: [UInt8] = []
        while let wake = lossy.nextWake(now: now) {
            now = max(now, wake)
            received += lossy.release(now: now, random: { Double(generator.next() >> 11) / Double(1 << 53) })
        }
        #expect(received == body)
        let cleanEnd = drain(&clean, from: 0).end
        // Half the segments wait 200 ms at least once: far slower than the clean link's 0.2 s.
        #expect(Double(now) / 1e9 > 5 * Double(cleanEnd) / 1e9, "lossy \(now), clean \(cleanEnd)")
    }

    @Test func anUnlimitedLaneOnlyDelays() {
        var lane = NetworkConditions(latency: 0.1).downLane()
        lane.enqueue([UInt8](repeating: 1, count: 300_000), now: 0)
        #expect(lane.release(now: 49_000_000, random: { 1 }).count == 0)
        let (bytes, end, _) = drain(&lane, from: 49_000_000)
        #expect(bytes == 300_000 && end == 50_000_000)
    }
}
