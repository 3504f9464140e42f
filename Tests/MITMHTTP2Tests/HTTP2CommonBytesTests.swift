import Testing

@testable import MITMHTTP2

/// Received names and values that HPACK's static table spells share one copy; anything else is copied as it came.
@Suite struct HTTP2CommonBytesTests {
    private func address(_ bytes: [UInt8]) -> UnsafeRawPointer? { bytes.withUnsafeBytes { $0.baseAddress } }

    private func name(_ text: String) -> [UInt8] {
        Array(text.utf8).withUnsafeBufferPointer { HTTP2CommonBytes.name($0.baseAddress, count: $0.count) }
    }

    private func value(_ text: String) -> [UInt8] {
        Array(text.utf8).withUnsafeBufferPointer { HTTP2CommonBytes.value($0.baseAddress, count: $0.count) }
    }

    @Test func aTableNameIsSharedAndEqualToWhatCame() {
        for text in [":status", ":method", "content-type", "www-authenticate", "via"] {
            let first = name(text)
            #expect(first == Array(text.utf8))
            #expect(address(first) == address(name(text)), "\(text) is one copy")
        }
    }

    @Test func otherBytesAreCopiedExactly() {
        for text in ["x-request-id", ":Status", "content-typf", "", "a-name-longer-than-any-in-the-table-of-hpack"] {
            let first = name(text)
            #expect(first == Array(text.utf8))
            #expect(text.isEmpty || address(first) != address(name(text)), "\(text) is its own copy")
        }
    }

    @Test func tableValuesAreSharedAndCaseMatters() {
        #expect(address(value("200")) == address(value("200")))
        #expect(value("https") == Array("https".utf8))
        #expect(value("get") == Array("get".utf8) && address(value("get")) != address(value("get")))
        #expect(value("gzip, deflate, br") == Array("gzip, deflate, br".utf8))
    }

    @Test func textIsTheTablesOrTheBytesDecoded() {
        for text in [":status", "content-type", "access-control-allow-origin", "x-request-id", ":Status", ""] {
            #expect(HTTP2HeaderField(name: Array(text.utf8), value: []).nameText == text)
        }
        for text in ["200", "gzip, deflate", "gzip, deflate, br", "Get", "\u{e9}t\u{e9}"] {
            #expect(HTTP2HeaderField(name: [], value: Array(text.utf8)).valueText == text)
        }
        #expect(HTTP2HeaderField(name: [0x61, 0xFF], value: [0xC3]).nameText == "a\u{FFFD}")
        #expect(HTTP2HeaderField(name: [], value: [0xC3]).valueText == "\u{FFFD}")
    }
}
