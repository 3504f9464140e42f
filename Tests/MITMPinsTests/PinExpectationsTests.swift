import Foundation
import MITMCore
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct PinExpectationsTests {
    @Test func androidLivePinSetIsRefusedExpiredIsInterceptedSubdomainsAtEveryLevel() async throws {
        let directory = try TemporaryDirectory()
        let path = try await SampleFiles.instantiate("nsc-expect-from.xml", in: directory)
        let derived = try PinExpectations.read(path)
        #expect(
            derived.expectations.map(\.description) == [
                "refused:api.example.test", "intercepted:old.example.test", "refused:cdn.example.test",
                "refused:*.cdn.example.test",
            ])
        let expired = derived.expectations[1]
        #expect(expired.source.file == path && expired.source.domain == "old.example.test")
        #expect(expired.source.note?.contains("pin-set expired on") == true)
        #expect(
            derived.expectations[3].pattern.matches("a.b.cdn.example.test"),
            "Android includeSubdomains covers every level")
    }

    @Test func androidMistakesAreWarnedWithFileAndDomain() async throws {
        let directory = try TemporaryDirectory()
        let path = try await SampleFiles.instantiate("nsc-expect-from.xml", in: directory)
        let derived = try PinExpectations.read(path)
        let about = { (domain: String) in derived.warnings.filter { $0.hasPrefix("\(path) (domain \(domain)): ") } }
        #expect(about("api.example.test").isEmpty)
        #expect(about("old.example.test").contains { $0.contains("the pin-set expired on") })
        #expect(about("cdn.example.test").contains { $0.contains("only one pin and no backup") })
        #expect(
            about("cdn.example.test").contains {
                $0.contains("\"c2hvcnQ=\" cannot be an SPKI SHA-256 hash: decodes to 5 bytes")
            })
        #expect(derived.notes.contains { $0.contains("<debug-overrides> trusts user CAs") })
        #expect(derived.notes.contains { $0.contains("no <trust-anchors> outside <debug-overrides> has src=\"user\"") })
    }

    @Test func userAnchorsThatOverridePinsMeanIntercepted() async throws {
        let directory = try TemporaryDirectory()
        let derived = try PinExpectations.read(try await SampleFiles.instantiate("nsc-nested.xml", in: directory))
        let byPattern = Dictionary(uniqueKeysWithValues: derived.expectations.map { ($0.pattern.description, $0) })
        #expect(byPattern["example.test"]?.outcome == .intercepted)
        #expect(byPattern["example.test"]?.source.note?.contains("overridePins") == true)
        #expect(byPattern["api.example.test"]?.outcome == .refused, "its own trust anchors do not override pins")
        #expect(derived.notes.isEmpty, "user CAs are trusted outside debug-overrides")
    }

    @Test func atsIncludesSubdomainsCoversOneLevelOnly() async throws {
        let directory = try TemporaryDirectory()
        let path = try await SampleFiles.instantiate("ats-expect-from.plist", in: directory)
        let derived = try PinExpectations.read(path)
        #expect(
            derived.expectations.map(\.description) == [
                "refused:api.example.test", "refused:example.org", "refused:*.example.org (one level)",
            ])
        let subdomains = derived.expectations[2].pattern
        #expect(subdomains.matches("math.example.org"))
        #expect(!subdomains.matches("advanced.math.example.org"))
        #expect(!subdomains.matches("example.org"))
        #expect(
            derived.warnings == [
                "\(path) (domain example.org): only one pin and no backup: when that key changes (a renewal with a new key, a move to another CA), every installed app stops connecting until it is updated; ship a backup pin for a spare key kept offline, or for the CA"
            ])
    }

    @Test func aFileThatIsNoPinConfigurationNamesTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("notes.txt", "hello")
        #expect(
            throws: PinsError(
                "\(path) is neither an Info.plist (XML or binary) nor an Android network_security_config.xml")
        ) {
            try PinExpectations.read(path)
        }
    }
}
