import Testing

@testable import MITMHTTP2

@Suite struct HTTP2StreamTableTests {
    @Test func keepsOneValuePerStreamInTheOrderStreamsCame() {
        var table = HTTP2StreamTable<String>()
        #expect(table.isEmpty)
        table[5] = "five"
        table[1] = "one"
        table[3] = "three"
        table[1] = "ONE"
        #expect(table.count == 3)
        #expect(table[1] == "ONE")
        #expect(table[7] == nil)
        #expect(table.values == ["five", "ONE", "three"])
        #expect(table.map(\.key) == [5, 1, 3])
    }

    @Test func forgetsStreamsByRemovalOrNil() {
        var table = HTTP2StreamTable<Int>()
        table[1] = 10
        table[3] = 30
        table[5] = 50
        #expect(table.removeValue(forKey: 3) == 30)
        #expect(table.removeValue(forKey: 3) == nil)
        table[1] = nil
        table[9] = nil
        #expect(table.values == [50])
        table.removeAll()
        #expect(table.isEmpty)
    }

    @Test func aDefaultValueIsAddedOnWrite() {
        var table = HTTP2StreamTable<Int>()
        table[1, default: 0] += 4
        table[1, default: 0] += 6
        #expect(table[1] == 10)
        #expect(table[3, default: 7] == 7)
        #expect(table[3] == nil)
    }
}
