import Testing

@testable import MITMCore

/// The kept first bytes of a body: what a body's announced size reserves, and what a kept body gives back.
@Suite struct CapturedBodyTests {
    static func storage(_ body: CapturedBody) -> UnsafeRawPointer? {
        body.bytes.withUnsafeBytes { $0.baseAddress }
    }

    @Test func anAnnouncedSizeIsKeptInOneBlockWithoutGrowingInSteps() {
        var body = CapturedBody(limit: 1_048_576)
        body.expect(size: 300_000)
        let reserved = Self.storage(body)
        #expect(body.bytes.capacity >= 300_000)
        for _ in 0..<20 { body.append([UInt8](repeating: 7, count: 15_000)) }
        #expect(Self.storage(body) == reserved, "appending up to the announced size moved the kept bytes")
        body.shrinkToFit()
        #expect(Self.storage(body) == reserved, "a body that filled its reservation was copied to shrink it")
        #expect(body.bytes.count == 300_000 && body.totalSize == 300_000 && !body.isTruncated)
    }

    @Test func theReservationStopsAtTheLimitAndANothingKeepingBodyReservesNothing() {
        var limited = CapturedBody(limit: 4_096)
        limited.expect(size: 100 * 1_048_576)
        #expect(limited.bytes.capacity >= 4_096 && limited.bytes.capacity < 8_192)
        limited.append([UInt8](repeating: 1, count: 10_000))
        #expect(limited.bytes.count == 4_096 && limited.totalSize == 10_000 && limited.isTruncated)

        var none = CapturedBody(limit: 0)
        none.expect(size: 1_000)
        #expect(none.bytes.capacity == 0)
        var unknown = CapturedBody(limit: 4_096)
        unknown.expect(size: nil)
        #expect(unknown.bytes.capacity == 0)
    }

    @Test func aBodyShorterThanAnnouncedGivesBackItsRoomWhenKept() {
        var body = CapturedBody(limit: 1_048_576)
        body.expect(size: 500_000)
        body.append([UInt8](repeating: 2, count: 1_000))
        body.shrinkToFit()
        #expect(body.bytes.count == 1_000 && body.bytes.capacity < 2_000)
    }
}

extension CapturedBodyTests {
    @Test func aBodyOfUnknownSizeGrowsNoFurtherThanTheLimit() {
        var body = CapturedBody(limit: 600_000)
        for _ in 0..<100 { body.append([UInt8](repeating: 3, count: 16_384)) }
        #expect(body.bytes.count == 600_000 && body.totalSize == 1_638_400)
        #expect(body.bytes.capacity < 600_000 + 600_000 / 8, "the kept bytes grew past the limit")
        let kept = Self.storage(body)
        body.shrinkToFit()
        #expect(Self.storage(body) == kept, "a body at its limit was copied to shrink it")
    }
}
