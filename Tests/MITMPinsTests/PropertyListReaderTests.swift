import Foundation
import Testing

@testable import MITMPins

/// The property list readers of our own: binary plists written by Python's `plistlib` read like their XML twins, and
/// every truncated, corrupted, cyclic or oversized input is an error in words, never a crash or a hang.
@Suite(.tags(.live), .skippedInFastTier) struct PropertyListReaderTests {
    /// Every kind of value, long-form lengths (over 15 items), UTF-16 strings, 1- to 16-byte integers.
    private static let plistlibScript = """
        import datetime, plistlib, sys
        value = {
            "NSAppTransportSecurity": {"NSPinnedDomains": {"api.test": {
                "NSIncludesSubdomains": True, "NSPinnedLeafIdentities": [{"SPKI-SHA256-BASE64": "pin="}]}}},
            "ascii": "plain", "unicode": "ünïcødé ✓ 𝄞", "long": "x" * 40, "flag": False, "real": 1.5,
            "numbers": [0, 255, 65535, 2**32, -1, -2**63, 2**64 - 1], "many": list(range(20)),
            "when": datetime.datetime(2026, 1, 31, 12, 0, 0), "blob": b"\\x00\\x01\\xfe", "empty": {}, "none": [],
        }
        fmt = plistlib.FMT_BINARY if sys.argv[1] == "binary" else plistlib.FMT_XML
        sys.stdout.buffer.write(plistlib.dumps(value, fmt=fmt, sort_keys=False))
        """

    private static func plistlib(_ format: String) async throws -> [UInt8] {
        let result = try await Subprocess.run("python3", ["-c", plistlibScript, format])
        guard result.succeeded else { throw TestFailure("plistlib failed: \(result)") }
        return result.stdout
    }

    /// A binary plist of `objects` (each encoded already; references are one byte, offsets two), `top` at the top.
    private static func binary(_ objects: [[UInt8]], top: Int = 0) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
        let word = { (value: Int) in (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        return bytes + [0, 0, 0, 0, 0, 0, 2, 1] + word(objects.count) + word(top) + word(table)
    }

    private static func problem(_ bytes: [UInt8]) -> String? {
        do {
            _ = try PropertyList.read(bytes, path: "Info.plist")
            return nil
        } catch {
            return error.message
        }
    }

    @Test func binaryAndXMLFromPlistlibReadTheSame() async throws {
        let binary = try await Self.plistlib("binary")
        #expect(binary.starts(with: Array("bplist00".utf8)))
        let fromBinary = try PropertyList.read(binary, path: "Info.plist")
        #expect(fromBinary == (try PropertyList.read(await Self.plistlib("xml"), path: "Info.plist")))
        guard case .dictionary(let top) = fromBinary else {
            Issue.record("not a dictionary: \(fromBinary)")
            return
        }
        #expect(top["unicode"] == .string("ünïcødé ✓ 𝄞"))
        #expect(top["long"] == .string(String(repeating: "x", count: 40)))
        #expect(
            top["numbers"]
                == .array(
                    [0, 255, 65535, 1 << 32, -1, Int128(Int64.min), Int128(UInt64.max)].map(PropertyList.integer)))
        #expect(top["many"] == .array((0..<20).map { .integer(Int128($0)) }))
        #expect(top["real"] == .real(1.5) && top["flag"] == .boolean(false))
        #expect(top["when"] == .date(Date(timeIntervalSince1970: 1_769_860_800)))
        #expect(top["blob"] == .data([0, 1, 0xFE]))
        let configuration = try ATSPlistReader.read(Data(binary), path: "Info.plist")
        #expect(configuration.domains.map(\.name) == ["api.test"] && configuration.domains[0].includesSubdomains)
    }

    @Test func everyTruncationOfABinaryPlistIsRefusedInWords() async throws {
        let binary = try await Self.plistlib("binary")
        for length in 6..<binary.count {
            let problem = Self.problem(Array(binary[..<length]))
            #expect(
                problem?.hasPrefix("Info.plist is not a usable property list: ") == true,
                "\(length) bytes: \(problem ?? "read")")
        }
    }

    @Test func everyCorruptedByteIsReadOrRefusedInWords() async throws {
        let binary = try await Self.plistlib("binary")
        var refused = 0
        for position in binary.indices.dropFirst("bplist".count) {
            for flip: UInt8 in [0x01, 0x10, 0x80, 0xFF] {
                var corrupted = binary
                corrupted[position] ^= flip
                if let problem = Self.problem(corrupted) {
                    refused += 1
                    #expect(problem.hasPrefix("Info.plist is not a usable property list: "), "\(problem)")
                }
            }
        }
        #expect(refused > binary.count)
    }

    @Test func cyclesAreRefused() {
        let cycles: [[UInt8]] = [
            Self.binary([[0xA1, 0]]),  // an array holding itself
            Self.binary([[0xA1, 1], [0xA1, 0]]),  // two arrays holding each other
            Self.binary([[0xD1, 1, 2], [0x51, UInt8(ascii: "k")], [0xA2, 1, 0]]),  // a dictionary inside its own value
        ]
        for bytes in cycles {
            #expect(Self.problem(bytes)?.contains("a container contains itself") == true, "\(bytes)")
        }
    }

    @Test func sharedObjectsAreReadOnceAndCountTowardsTheDepth() throws {
        // Each array holds the next one twice: 2^60 values were it expanded, one read of each object as it is.
        var chain: [[UInt8]] = (0..<60).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        chain.append([0x09])
        let shared = try PropertyList.read(Self.binary(chain), path: "Info.plist")
        var level = shared
        var depth = 0
        while case .array(let items) = level {
            #expect(items.count == 2 && items[0] == items[1])
            level = items[0]
            depth += 1
        }
        #expect(depth == 60 && level == .boolean(true))
        // Read first 40 deep, then met again under 30 more arrays: 70 deep.
        var objects: [[UInt8]] = [[0xA2, 1, 41]]
        objects += (1..<40).map { [0xA1, UInt8($0 + 1)] } + [[0x09]]
        objects += (41..<71).map { [0xA1, UInt8($0 == 70 ? 1 : $0 + 1)] }
        #expect(Self.problem(Self.binary(objects))?.contains("nest more than 64 deep") == true)
    }

    @Test(
        arguments: [
            (Array("bplist01".utf8) + [UInt8](repeating: 0, count: 40), "another version than bplist00"),
            (Array("bplist00".utf8) + [0x09], "ends before a binary property list's trailer"),
            (binary([[0x09]]).replacing([2, 1], with: [0, 1], maxReplacements: 1), "offsets of 0 bytes"),
            (Array(binary([[0x09]]).dropLast(24)) + [UInt8](repeating: 0, count: 24), "counts 0 objects"),
            (binary([[0x09]], top: 1), "top object is 1, but it holds only 1"),
            (Array(binary([[0x09]]).dropLast(1)) + [200], "offset table (at byte 200"),
            (binary([[0xA1, 7]]), "refers to object 7, but there are only 1"),
            (
                Array("bplist00".utf8) + [0x09] + [UInt8](repeating: 0xFF, count: 8) + [0, 0, 0, 0, 0, 0, 8, 1]
                    + [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 8) + [0, 0, 0, 0, 0, 0, 0, 9],
                "object 0 starts at byte 18446744073709551615, outside the objects"
            ),
            (binary([[0x5F, 0x10, 200]]), "runs past the end of the objects"),
            (binary([[0x5F, 0x40]]), "malformed length"),
            (binary([[0x70]]), "unknown type 0x70"),
            (binary([[0x80, 1]]), "keyed-archive UID"),
            (binary([[0xC0]]), "a set"),
            (binary([[0x00]]), "a null or fill byte"),
            (binary([[0x15] + [UInt8](repeating: 0, count: 32)]), "integer of 32 bytes"),
            (binary([[0xD1, 1, 1], [0x10, 1]]), "has an integer as a key"),
            (binary([[0xD2, 1, 1, 2, 2], [0x51, 0x6B], [0x09]]), "the key \"k\" twice"),
            (binary([[0x61, 0xD8, 0x00]]), "not valid UTF-16"),
            (binary([[0x51, 0xC3]]), "ASCII string with a byte over 0x7F"),
        ] as [([UInt8], String)])
    func malformedBinaryPlistsAreRefusedInWords(bytes: [UInt8], words: String) {
        let problem = Self.problem(bytes)
        #expect(problem?.hasPrefix("Info.plist is not a usable property list: ") == true, "\(problem ?? "read")")
        #expect(problem?.contains(words) == true, "\(problem ?? "read")")
    }

    @Test(arguments: [
        ("<plist><string>a</string><string>b</string></plist>", "<plist> holds 2 values"),
        ("<plist><dict><key>a</key></dict></plist>", "a key without a value"),
        (
            "<plist><dict><key>a</key><dict><string>k</string><true/></dict></dict></plist>",
            "at a has <string> where a <key> belongs"
        ),
        ("<plist><dict><key>a</key><true/><key>a</key><false/></dict></plist>", "the key \"a\" twice"),
        ("<plist><array><integer>12a</integer></array></plist>", "<integer> at [0] holds \"12a\", not an integer"),
        ("<plist><data>!!</data></plist>", "<data> is not base64"),
        ("<plist><date>yesterday</date></plist>", "not a date"),
        ("<plist><dict>text<key>a</key><true/></dict></plist>", "<dict> holds text outside its elements"),
        ("<plist><set/></plist>", "<set> is not a property list element"),
        ("<plist><string><b>x</b></string></plist>", "<string> holds <b>, but only text belongs there"),
        ("<dict/>", "its root element is <dict>, not <plist>"),
    ])
    func malformedXMLPlistsAreRefusedInWords(xml: String, words: String) {
        let problem = Self.problem(Array(xml.utf8))
        #expect(problem?.hasPrefix("Info.plist is not a usable property list: ") == true, "\(problem ?? "read")")
        #expect(problem?.contains(words) == true, "\(problem ?? "read")")
    }

    @Test func aFileLargerThanAnyInfoPlistIsRefusedUnread() {
        let bytes = [UInt8](repeating: 0x20, count: PropertyList.maximumBytes + 1)
        #expect(Self.problem(bytes) == "Info.plist is larger than 8 MiB, which no Info.plist is")
    }
}
