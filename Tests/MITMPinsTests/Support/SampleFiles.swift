import Foundation

@testable import MITMPins

/// The files under `Samples/`, with their `${NAME}` placeholders filled from the test PKI.
enum SampleFiles {
    /// The Samples directory beside this test target's sources.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Samples").path

    /// A pin that matches nothing in the test PKI.
    static let backupPin = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="

    /// `Samples/name`, filled in and written to `directory`; returns the written path.
    static func instantiate(_ name: String, in directory: TemporaryDirectory, now: Date = Date()) async throws
        -> String
    {
        var text = try String(
            contentsOfFile: (Self.directory as NSString).appendingPathComponent(name), encoding: .utf8)
        for (key, value) in try await values(now: now) {
            text = text.replacingOccurrences(of: "${\(key)}", with: value)
        }
        return try directory.write(name, text)
    }

    private static func values(now: Date) async throws -> [String: String] {
        let pki = try await TestPKI.withPinLeaves()
        let leaf = try require(try CertificateFile.read(pki.path("leaf.pem")).first)
        let leafElement = try ChainElement(leaf, index: 0, position: .leaf, now: now)
        return [
            "LEAF_PIN": leafElement.pin,
            "INTERMEDIATE_PIN": try await pki.opensslPin("intermediate.pem"),
            "ROOT_PIN": try await pki.opensslPin("root.pem"),
            "OTHER_PIN": try await pki.opensslPin("other.pem"),
            "EXPIRING_PIN": try await pki.opensslPin("expiring.pem"),
            "BACKUP_PIN": backupPin,
            "LEAF_RAW_KEY_HASH": leafElement.rawKey.sha256Base64,
            "LEAF_CERT_HASH": leafElement.certificateSHA256Base64,
            "PAST_DAY": DateText.day(now.addingTimeInterval(-30 * 86_400)),
            "SOON_DAY": DateText.day(now.addingTimeInterval(10 * 86_400)),
            "FUTURE_DAY": DateText.day(now.addingTimeInterval(400 * 86_400)),
        ]
    }
}

private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw TestFailure("missing test certificate") }
    return value
}
