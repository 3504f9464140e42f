import Testing

@testable import MITMCore

@Suite struct HTTPHeadersTests {
    static let sample: HTTPHeaders = [
        "Host": "example.com",
        "Accept": "text/html",
        "Set-Cookie": "a=1",
        "set-cookie": "b=2",
        "Connection": "keep-alive, Upgrade",
        "CONNECTION": " ,TE,, close ",
    ]

    @Test func theEightBytesAtATimeCaseFoldingAgreesWithTheByteRule() {
        for byte in UInt8.min...UInt8.max {
            for position in 0..<8 {
                var bytes = [UInt8](repeating: UInt8(ascii: "Q"), count: 8)
                bytes[position] = byte
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                let folded = withUnsafeBytes(of: HTTPSyntax.lowercasedASCII(word)) { Array($0) }
                #expect(folded == bytes.map(HTTPSyntax.lowercasedASCII), "byte \(byte) at \(position)")
            }
        }
    }

    @Test func bytesOfEveryLengthCompareExactlyWhereverTheyDiffer() {
        let line = Array("Accept-Encoding: gzip, deflate, br, zstd".utf8)
        for length in 0...line.count {
            let bytes = Array(line.prefix(length))
            line.withUnsafeBufferPointer { whole in
                bytes.withUnsafeBufferPointer {
                    #expect(HTTPSyntax.sameBytes($0, $0) && HTTPSyntax.sameBytes($0, .init(rebasing: whole[..<length])))
                }
            }
            #expect(
                length == line.count
                    || !bytes.withUnsafeBufferPointer { prefix in
                        line.withUnsafeBufferPointer { HTTPSyntax.sameBytes(prefix, $0) }
                    })
            for position in 0..<length {
                var changed = bytes
                changed[position] ^= 0x20
                let same = bytes.withUnsafeBufferPointer { one in
                    changed.withUnsafeBufferPointer { HTTPSyntax.sameBytes(one, $0) }
                }
                #expect(!same, "\(length) bytes, differing at \(position)")
            }
        }
    }

    @Test func namesOfEveryLengthCompareIgnoringOnlyASCIICase() {
        let name = "Strict-Transport-Security-Extra-Long"
        for length in 0...name.utf8.count {
            let prefix = String(name.utf8.prefix(length))!
            #expect(HTTPSyntax.equalsIgnoringASCIICase(prefix, prefix.lowercased()))
            #expect(HTTPSyntax.equalsIgnoringASCIICase(prefix.uppercased(), prefix))
            for position in 0..<length {
                var changed = Array(prefix.utf8)
                changed[position] = changed[position] == UInt8(ascii: "-") ? UInt8(ascii: "_") : UInt8(ascii: "-")
                let other = String(decoding: changed, as: UTF8.self)
                #expect(!HTTPSyntax.equalsIgnoringASCIICase(prefix, other), "\(prefix) against \(other)")
            }
        }
        // `@` and `[` sit next to `A` and `Z`, and `É`'s bytes are not ASCII: none of them folds.
        #expect(!HTTPSyntax.equalsIgnoringASCIICase("@[content-type", "`{content-type"))
        #expect(!HTTPSyntax.equalsIgnoringASCIICase("X-Caf\u{C9}-Header", "x-caf\u{E9}-header"))
    }

    @Test func lookUpsIgnoreCase() {
        #expect(Self.sample.first("host") == "example.com")
        #expect(Self.sample.first("SET-COOKIE") == "a=1")
        #expect(Self.sample.first("missing") == nil)
        #expect(Self.sample.contains("accept"))
        #expect(!Self.sample.contains("Accept-Encoding"))
        #expect(Self.sample.values("Set-Cookie") == ["a=1", "b=2"])
        #expect(Self.sample.values("missing") == [])
    }

    @Test func tokensSplitTrimAndLowercaseAllValues() {
        #expect(Self.sample.tokens("connection") == ["keep-alive", "upgrade", "te", "close"])
        #expect(Self.sample.tokens("missing") == [])
        let single: HTTPHeaders = ["Connection": "keep-alive, Upgrade"]
        #expect(single.tokens("Connection") == ["keep-alive", "upgrade"])
    }

    @Test func orderAndSpellingAreKept() {
        #expect(Self.sample.map(\.name) == ["Host", "Accept", "Set-Cookie", "set-cookie", "Connection", "CONNECTION"])
        #expect(Self.sample.count == 6)
        #expect(!Self.sample.isEmpty)
        #expect(HTTPHeaders().isEmpty)
        #expect(HTTPHeaders([HTTPHeaderField(name: "A", value: "1")]) == ["A": "1"])
        #expect(HTTPHeaders([HTTPHeaderField(name: "a", value: "1")]) != ["A": "1"])
    }

    @Test func addAppends() {
        var headers: HTTPHeaders = ["A": "1"]
        headers.add(name: "B", value: "2")
        headers.add(name: "a", value: "3")
        #expect(
            headers.fields == [
                HTTPHeaderField(name: "A", value: "1"),
                HTTPHeaderField(name: "B", value: "2"),
                HTTPHeaderField(name: "a", value: "3"),
            ])
    }

    @Test func removeDropsEveryFieldOfThatName() {
        var headers = Self.sample
        headers.remove("SET-cookie")
        #expect(headers.map(\.name) == ["Host", "Accept", "Connection", "CONNECTION"])
        headers.remove("nothing")
        #expect(headers.count == 4)
    }

    @Test func replaceOrAddKeepsThePositionOfTheFirstField() {
        var headers = Self.sample
        headers.replaceOrAdd(name: "connection", value: "close")
        #expect(
            headers.fields == [
                HTTPHeaderField(name: "Host", value: "example.com"),
                HTTPHeaderField(name: "Accept", value: "text/html"),
                HTTPHeaderField(name: "Set-Cookie", value: "a=1"),
                HTTPHeaderField(name: "set-cookie", value: "b=2"),
                HTTPHeaderField(name: "Connection", value: "close"),
            ])
        headers.replaceOrAdd(name: "Via", value: "1.1 mitm")
        #expect(headers.fields.last == HTTPHeaderField(name: "Via", value: "1.1 mitm"))
        headers.replaceOrAdd(name: "HOST", value: "other.example")
        #expect(headers.fields.first == HTTPHeaderField(name: "Host", value: "other.example"))
    }
}
