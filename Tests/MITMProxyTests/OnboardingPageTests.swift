import Foundation
import Testing

/// `http://mitm.proxy/` through the proxy: the browser's platform first, the CA as PEM, DER and a configuration profile
/// that Python's plistlib reads back with exactly the CA's DER inside and UUIDs that stay the same for one CA.
@Suite(.tags(.live), .skippedInFastTier) struct OnboardingPageTests {
    private static let iPhone =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
    private static let android =
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36"

    /// The platform section ids in page order.
    private func sections(_ page: String) -> [String] {
        page.components(separatedBy: "<section id=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    @Test func anIPhoneGetsTheIOSStepsFirstAndAnAndroidPhoneTheAndroidSteps() async throws {
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let iPhone = try await Curl.run(through: proxy, ["-A", Self.iPhone, "http://mitm.proxy/"])
        #expect(
            sections(iPhone.stdoutText) == ["ios", "android", "macos", "windows", "linux", "firefox"],
            "\(iPhone.stdoutText)")
        #expect(iPhone.stdoutText.contains("Steps for <b>iPhone and iPad (iOS, iPadOS)</b> first"))
        #expect(iPhone.stdoutText.contains("href=\"/ca.mobileconfig\""))
        let android = try await Curl.run(through: proxy, ["-A", Self.android, "http://mitm.proxy/"])
        #expect(sections(android.stdoutText).first == "android", "\(android.stdoutText)")
        let firefox = try await Curl.run(
            through: proxy,
            [
                "-A", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
                "http://mitm.proxy/",
            ])
        #expect(Array(sections(firefox.stdoutText).prefix(2)) == ["firefox", "windows"], "\(firefox.stdoutText)")
        let hostile = try await Curl.run(
            through: proxy, ["-A", "<script>alert(1)</script> iPhone", "http://mitm.proxy/"])
        #expect(
            sections(hostile.stdoutText).first == "ios" && !hostile.stdoutText.contains("alert(1)"),
            "the User-Agent is never echoed")
    }

    /// Directly from this machine the proxy's address is the web UI's; `--no-web` gives it back to the onboarding page
    /// (a phone on the network gets that page either way: see `WebUILifeTests`).
    @Test func thePageCheckedThroughTheProxyChecksTrustAndTheDirectOneSaysHowTo() async throws {
        let proxy = try await ProxyHarness.start { $0.webUI.enabled = false }
        defer { proxy.stop() }
        let through = try await Curl.run(through: proxy, ["http://mitm.proxy/"])
        #expect(through.stdoutText.contains("fetch(\"https://mitm.proxy/trusted\""), "\(through)")
        let direct = try await Subprocess.run("curl", ["-sS", "--max-time", "10", "http://127.0.0.1:\(proxy.port)/"])
        #expect(
            !direct.stdoutText.contains("fetch(")
                && direct.stdoutText.contains("Set this device's proxy to this computer"), "\(direct)")
        #expect(
            sections(direct.stdoutText) == ["ios", "android", "macos", "windows", "linux", "firefox"],
            "no User-Agent to go by")
    }

    @Test func theCAComesAsPEMAsDERAndAsAProfileHoldingExactlyTheDER() async throws {
        let directory = try TemporaryDirectory.make("onboarding")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let proxy = try await ProxyHarness.start()
        defer { proxy.stop() }
        let pem = try await Curl.run(through: proxy, ["-D", directory + "/pem-head", "http://mitm.proxy/ca.pem"])
        #expect(pem.stdoutText == (try String(contentsOfFile: proxy.caCertificate, encoding: .utf8)))
        #expect(
            (try String(contentsOfFile: directory + "/pem-head", encoding: .utf8)).contains(
                "Content-Disposition: attachment; filename=\"mitm-proxy-ca.pem\""))
        let der = try await Curl.run(through: proxy, ["-o", directory + "/ca.cer", "http://mitm.proxy/ca.cer"])
        let converted = try await Subprocess.run(
            "openssl", ["x509", "-in", proxy.caCertificate, "-outform", "der", "-out", directory + "/expected.der"])
        #expect(der.succeeded && converted.succeeded)
        let derBytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/ca.cer"))
        #expect(
            derBytes == (try Data(contentsOf: URL(fileURLWithPath: directory + "/expected.der"))),
            "the DER is the CA certificate")

        let profile = try await Curl.run(
            through: proxy,
            [
                "-D", directory + "/profile-head", "-o", directory + "/ca.mobileconfig",
                "http://mitm.proxy/ca.mobileconfig",
            ])
        #expect(profile.succeeded, "\(profile)")
        #expect(
            (try String(contentsOfFile: directory + "/profile-head", encoding: .utf8)).contains(
                "Content-Type: application/x-apple-aspen-config"))
        let read = try await Self.readProfile(directory + "/ca.mobileconfig")
        #expect(
            read["type"] as? String == "Configuration" && read["payloadType"] as? String == "com.apple.security.root",
            "\(read)")
        #expect(read["payloadCount"] as? Int == 1)
        #expect(
            Data(base64Encoded: read["certificate"] as? String ?? "") == derBytes,
            "the payload holds exactly the CA's DER")
        #expect(read["removalDisallowed"] as? Bool == false)
        let uuids = [read["uuid"] as? String, read["payloadUUID"] as? String].compactMap { $0 }
        #expect(
            uuids.count == 2 && Set(uuids).count == 2 && uuids.allSatisfy { UUID(uuidString: $0) != nil }, "\(uuids)")

        // Same CA, another proxy: the same profile (installing it again replaces it). Another CA: other UUIDs.
        let sameCA = try await ProxyHarness.start { $0.caDirectory = proxy.caDirectory }
        let otherCA = try await ProxyHarness.start()
        defer { otherCA.stop() }
        _ = try await Curl.run(
            through: sameCA, ["-o", directory + "/again.mobileconfig", "http://mitm.proxy/ca.mobileconfig"])
        sameCA.server.stop()
        _ = try await Curl.run(
            through: otherCA, ["-o", directory + "/other.mobileconfig", "http://mitm.proxy/ca.mobileconfig"])
        let again = try await Self.readProfile(directory + "/again.mobileconfig")
        let other = try await Self.readProfile(directory + "/other.mobileconfig")
        #expect(
            again["uuid"] as? String == read["uuid"] as? String
                && again["payloadUUID"] as? String == read["payloadUUID"] as? String)
        #expect(
            other["uuid"] as? String != read["uuid"] as? String
                && other["payloadUUID"] as? String != read["payloadUUID"] as? String)
    }

    /// The fields of a configuration profile, read with Python's plistlib.
    private static func readProfile(_ path: String) async throws -> [String: Any] {
        let script = """
            import base64, json, plistlib, sys
            with open(sys.argv[1], "rb") as f:
                profile = plistlib.load(f)
            payloads = profile["PayloadContent"]
            print(json.dumps({"type": profile["PayloadType"], "uuid": profile["PayloadUUID"], "payloadCount": len(payloads),
                              "payloadType": payloads[0]["PayloadType"], "payloadUUID": payloads[0]["PayloadUUID"],
                              "removalDisallowed": profile["PayloadRemovalDisallowed"],
                              "certificate": base64.b64encode(payloads[0]["PayloadContent"]).decode()}))
            """
        let result = try await Subprocess.run("python3", ["-c", script, path])
        guard result.succeeded,
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        else {
            throw SubprocessError(description: "plistlib could not read \(path): \(result)")
        }
        return object
    }
}
